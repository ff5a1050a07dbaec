package modelspec

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every part a registry variant uses must be read by each implementation
// that runs it, or that implementation trains or evaluates the variant as
// if the part were absent: silently other numbers, caught (if at all) by an
// agreement test that names neither the part nor the place. This test names
// both. It checks wiring only, from each implementation's source: that the
// part's field (or one of its signals) appears there at all. Whether the
// implementation is right is the agreement tests' job
// (docs/adding-an-encoding.md lists them).

// part is one way positions enter attention: a Variant field, the
// variants that use it, and the identifiers whose presence in an
// implementation's source shows that it reads the part.
type part struct {
	name  string
	field string // the modelspec.Variant field that holds it
	uses  func(Variant) bool
	// forward: the forward pass reads it, so weights files carry it
	// (Arch has a field of that name, set by Config.Arch) and the
	// evaluator must read it. Otherwise it is training-only.
	forward bool
	signals []string // any one of these identifiers, in non-test source
}

// parts are the registry's parts. A rotation family is a value of the
// Rotation field: the gomlx model takes RoPE and fixed tables as host cos/sin
// (HostRotation, modelspec/positions.go), and the native trainer tells an
// accumulated rotation by its angle table (HasAngleTable) or projection.
var parts = []part{
	{"RoPE rotation", "Rotation", func(v Variant) bool { return v.Rotation == RotationRoPE }, true, []string{"RotationRoPE", "HostRotation"}},
	{"accumulated rotation", "Rotation", func(v Variant) bool { return v.Rotation == RotationAccumulated }, true, []string{"RotationAccumulated", "HasAngleTable"}},
	{"value transport", "ValueRot", func(v Variant) bool { return v.ValueRot }, true, []string{"ValueRot"}},
	{"ALiBi bias", "ALiBi", func(v Variant) bool { return v.ALiBi }, true, []string{"ALiBi"}},
	{"KERPLE log bias", "KerpleLog", func(v Variant) bool { return v.KerpleLog }, true, []string{"KerpleLog"}},
	{"learned angle table", "Learned", func(v Variant) bool { return v.Learned }, false, []string{"Learned"}},
	{"angle projection", "AngleProj", func(v Variant) bool { return v.AngleProj }, true, []string{"AngleProj"}},
	{"Householder transport", "Householder", func(v Variant) bool { return v.Householder }, true, []string{"Householder"}},
	{"forgetting gate", "ForgetGate", func(v Variant) bool { return v.ForgetGate }, true, []string{"ForgetGate"}},
}

// rotations are the Rotation values the parts above cover (none: no part).
var rotations = []string{RotationNone, RotationRoPE, RotationAccumulated}

// notParts are the Variant fields that are not parts an implementation
// reads: names, documentation, plan membership, and the angle table's
// initialisation and learning rate, which modelspec implements once for
// every trainer (InitialAngles, LRScale).
var notParts = []string{"Name", "Doc", "OptIn", "GomlxOnly", "AngleInit", "AngleLR"}

// implementation is one of the three codes that run a variant.
type implementation struct {
	pkg     string // import path, as errors name it
	dir     string // from this package's directory
	trainer bool   // reads the training-only parts too
	native  bool   // the native trainer: GomlxOnly variants are exempt
}

var implementations = []implementation{
	{pkg: "routebench/model (gomlx)", dir: "../model", trainer: true},
	{pkg: "routebench/model/nativetrain", dir: "../model/nativetrain", trainer: true, native: true},
	{pkg: "routebench/model/nativeeval", dir: "../model/nativeeval"},
}

// identifiers are the identifiers in the non-test Go files of dir
// (every build tag: a part read only in the XLA build still counts).
func identifiers(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				ids[id.Name] = true
			}
			return true
		})
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no Go source in %s", dir)
	}
	return ids, nil
}

// missingParts lists, one error per (variant, part), the parts of vs that
// impl (whose source has the identifiers ids) does not read.
func missingParts(impl implementation, ids map[string]bool, vs []Variant) []error {
	var errs []error
	for _, v := range vs {
		if impl.native && v.GomlxOnly {
			continue
		}
		for _, p := range parts {
			if !p.uses(v) || (!p.forward && !impl.trainer) {
				continue
			}
			read := false
			for _, s := range p.signals {
				read = read || ids[s]
			}
			if !read {
				fix := "implement it there and pass its agreement tests (docs/adding-an-encoding.md)"
				if impl.native {
					fix += ", or set GomlxOnly on the variant to train it with gomlx until then"
				}
				errs = append(errs, fmt.Errorf("%s does not implement the %s (Variant.%s; none of %v in its source) that variant %s uses: %s",
					impl.pkg, p.name, p.field, p.signals, v.Name, fix))
			}
		}
	}
	return errs
}

// unclassifiedFields lists the fields of a Variant-like struct type that are
// neither a part nor in notParts: a new part must be added to parts, or no
// implementation is checked for it.
func unclassifiedFields(typ reflect.Type) []string {
	known := map[string]bool{}
	for _, f := range notParts {
		known[f] = true
	}
	for _, p := range parts {
		known[p.field] = true
	}
	var out []string
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; !known[name] {
			out = append(out, name)
		}
	}
	return out
}

func TestEveryImplementationReadsEveryPart(t *testing.T) {
	if f := unclassifiedFields(reflect.TypeFor[Variant]()); len(f) > 0 {
		t.Errorf("modelspec.Variant fields %v are neither a part nor in notParts (implementations_test.go): add each part to parts with the identifiers that show an implementation reads it", f)
	}
	for _, v := range registry {
		known := false
		for _, r := range rotations {
			known = known || v.Rotation == r
		}
		if !known {
			t.Errorf("variant %s: rotation %q has no part in implementations_test.go: add one with its signals", v.Name, v.Rotation)
		}
	}
	for _, impl := range implementations {
		ids, err := identifiers(impl.dir)
		if err != nil {
			t.Fatalf("%s: %v", impl.pkg, err)
		}
		for _, err := range missingParts(impl, ids, registry) {
			t.Error(err)
		}
	}
}

// A forward part is in the weights format: Arch has its field and
// Config.Arch copies it, so an evaluator reading only a weights file sees it.
func TestForwardPartsInArch(t *testing.T) {
	arch := reflect.TypeFor[Arch]()
	for _, p := range parts {
		if !p.forward {
			continue
		}
		if _, ok := arch.FieldByName(p.field); !ok {
			t.Errorf("the %s (Variant.%s) changes the forward pass but Arch has no field %s: weights files would not say the evaluator must apply it", p.name, p.field, p.field)
			continue
		}
		for _, v := range registry {
			a := Config{Variant: v.Name, Vocab: 19, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: 16}.Arch()
			got, want := reflect.ValueOf(a).FieldByName(p.field).Interface(), reflect.ValueOf(v).FieldByName(p.field).Interface()
			if got != want {
				t.Errorf("variant %s: Config.Arch sets %s = %v, the registry has %v", v.Name, p.field, got, want)
			}
		}
	}
}

// The checks above can fail, and name the implementation, the part and the
// variant: nativeeval's source without ForgetGate misses path-fox's gate; a
// gomlx-only variant excuses the native trainer only; a new Variant field is
// reported until it is classified.
func TestImplementationCheckCanFail(t *testing.T) {
	ids, err := identifiers("../model/nativeeval")
	if err != nil {
		t.Fatal(err)
	}
	delete(ids, "ForgetGate")
	errs := missingParts(implementations[2], ids, registry)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "routebench/model/nativeeval does not implement the forgetting gate (Variant.ForgetGate") || !strings.Contains(errs[0].Error(), "variant path-fox") {
		t.Errorf("nativeeval without ForgetGate: %v; want one error naming nativeeval, the forgetting gate and path-fox", errs)
	}
	fox, err := LookupVariant("path-fox")
	if err != nil {
		t.Fatal(err)
	}
	fox.GomlxOnly = true
	native, gomlx := implementations[1], implementations[0]
	if errs := missingParts(native, map[string]bool{"Householder": true}, []Variant{fox}); len(errs) != 0 {
		t.Errorf("a GomlxOnly variant's parts were required of the native trainer: %v", errs)
	}
	if errs := missingParts(gomlx, map[string]bool{"Householder": true}, []Variant{fox}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "routebench/model (gomlx)") {
		t.Errorf("a GomlxOnly variant's gate missing from gomlx: %v; want one error naming the gomlx model", errs)
	}
	learned, err := LookupVariant("learned-qk")
	if err != nil {
		t.Fatal(err)
	}
	if errs := missingParts(implementations[2], map[string]bool{"RotationAccumulated": true}, []Variant{learned}); len(errs) != 0 {
		t.Errorf("the evaluator was asked for the training-only learned table: %v", errs)
	}
	type withNewPart struct {
		Variant
		LogBias bool
	}
	if f := unclassifiedFields(reflect.TypeFor[withNewPart]()); len(f) != 2 || f[1] != "LogBias" {
		t.Errorf("unclassified fields %v; want the embedded Variant and LogBias", f)
	}
}
