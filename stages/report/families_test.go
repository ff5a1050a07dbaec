package report

import (
	"fmt"
	"testing"

	"routebench/modelspec"
)

// Every default variant lands in the family its parts say, and the order
// groups the families: a variant renamed or recomposed in the registry
// moves here too, because familyOf reads the parts.
func TestFamilyStyles(t *testing.T) {
	want := map[string]string{
		"nope": familyBaseline.name, "rope": familyBaseline.name,
		"random-qk": familyRotQK.name, "learned-qk": familyRotQK.name,
		"random-qkv": familyRotQKV.name, "learned-qkv": familyRotQKV.name, "learned-proj-qkv": familyRotQKV.name,
		"alibi": familyBias.name, "random-qkv-alibi": familyBias.name, "kerple-log": familyBias.name,
		"path": familyPaTH.name, "path-fox": familyPaTH.name,
		"random-qk@seed2": familyRotQK.name, "a-sweep-label": familyBaseline.name,
		"rope+yarn": familyBaseline.name, "rope+pi@seed22": familyBaseline.name, "rope+ntk": familyBaseline.name,
	}
	for name, fam := range want {
		if got := familyOf(name).name; got != fam {
			t.Errorf("familyOf(%s) = %q, want %q", name, got, fam)
		}
	}
	order, styles := familyStyles(append(modelspec.DefaultVariants(), "rope+yarn", "rope+pi", "rope+ntk"))
	last := -1
	for _, name := range order {
		f := familyOf(name)
		if f.order < last {
			t.Fatalf("order %v: %s (family %d) after family %d", order, name, f.order, last)
		}
		last = f.order
	}
	// Within a family no two lines look alike.
	type look struct {
		c    any
		dash string // the pattern itself: dashed and dotted both have two lengths
	}
	seen := map[look]string{}
	for _, name := range order {
		st := styles[name]
		k := look{st.color, fmt.Sprint(st.dashes)}
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s are drawn alike", name, other)
		}
		seen[k] = name
	}
}
