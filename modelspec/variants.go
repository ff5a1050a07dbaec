package modelspec

import (
	"fmt"
	"sort"
	"strings"
)

// Rotation families, as written in Arch.Rotation.
const (
	RotationNone        = "none"        // no rotation
	RotationRoPE        = "rope"        // psi_i = i * theta_p (position index)
	RotationAccumulated = "accumulated" // psi_i = sum_{s<=i} angles[x_s] (route sum of per-token steps)
)

// Variant is one registry entry: how positions enter attention. A variant
// is a composition of independent parts (a rotation family, value
// transport, a distance bias, learned angles), so a new combination is one
// line in the registry and every implementation reads the parts, not the
// name.
type Variant struct {
	Name     string
	Rotation string // RotationNone, RotationRoPE or RotationAccumulated
	ValueRot bool   // value transport: v_j rotated by psi_j, the output by -psi_i
	ALiBi    bool   // distance bias -m_h (i-j), m_h = ALiBiSlopes
	Learned  bool   // the accumulated angle table is a trained variable
	Doc      string
	// PaTH and FoX (modelspec/path.go): data-dependent Householder
	// transport of the keys, and FoX's forgetting gate on top of it.
	Householder bool // logit_ij = q_i^T H_i ... H_{j+1} k_j, H_t = I - beta_t w_t w_t^T
	ForgetGate  bool // logits += sum_{t=j+1..i} g_t, g_t = logsigmoid(linear(x_t)) per head
	// OptIn variants are in the registry but not in the default set
	// (Variants): a profile trains them only when it names them.
	OptIn bool
	// GomlxOnly marks a variant with a part that model/nativetrain does not
	// implement (none today): config validation refuses trainer "native"
	// for it and the planner trains it with gomlx (NativeTrainer).
	GomlxOnly bool
}

// Families' documentation, composed into Variant.Doc.
const (
	docNoPE        = "no position signal; causality alone"
	docRoPE        = "RoPE: psi_i = i * 10000^(-2p/d_head), interleaved pairs"
	docRandom      = "q, k rotated by prefix sums of a fixed seeded table angles[V,H,P] ~ N(0, sigma_p^2)"
	docLearned     = "; the table trained (initialised from the random table of the same seed)"
	docValueRot    = "value transport (v_j rotated by psi_j, output by -psi_i)"
	docALiBiSuffix = "ALiBi bias -m_h (i-j), m_h = 2^(-8(h+1)/H)"
)

func nope() Variant { return Variant{Name: "nope", Rotation: RotationNone, Doc: docNoPE} }
func rope() Variant { return Variant{Name: "rope", Rotation: RotationRoPE, Doc: docRoPE} }
func random() Variant {
	return Variant{Name: "random-qk", Rotation: RotationAccumulated, Doc: docRandom}
}
func learned() Variant {
	return Variant{Name: "learned-qk", Rotation: RotationAccumulated, Learned: true, Doc: docRandom + docLearned}
}

// withValueTransport rotates values too; "-qk" names become "-qkv".
func (v Variant) withValueTransport() Variant {
	v.ValueRot = true
	v.Name = strings.TrimSuffix(v.Name, "-qk") + "-qkv"
	v.Doc += "; plus " + docValueRot
	return v
}

// withALiBi adds the distance bias under the given name.
func (v Variant) withALiBi(name string) Variant {
	v.ALiBi = true
	v.Name = name
	if v.Rotation == RotationNone {
		v.Doc = docALiBiSuffix
	} else {
		v.Doc += "; plus " + docALiBiSuffix
	}
	return v
}

// registry is the canonical order (tables, plots, plans).
var registry = []Variant{
	nope(),
	rope(),
	nope().withALiBi("alibi"),
	random(),
	random().withValueTransport(),
	learned(),
	learned().withValueTransport(),
	path(),
	path().withForgetGate(),
}

// Variants lists the default set in canonical order: every registry entry
// but the opt-in ones (what a profile trains when it names no variants).
func Variants() []string {
	var names []string
	for _, v := range registry {
		if !v.OptIn {
			names = append(names, v.Name)
		}
	}
	return names
}

// AllVariants lists every registry name in canonical order, opt-in
// variants included.
func AllVariants() []string {
	names := make([]string, len(registry))
	for i, v := range registry {
		names[i] = v.Name
	}
	return names
}

// LookupVariant returns the registry entry for name.
func LookupVariant(name string) (Variant, error) {
	for _, v := range registry {
		if v.Name == name {
			return v, nil
		}
	}
	names := AllVariants()
	sort.Strings(names)
	return Variant{}, fmt.Errorf("modelspec: unknown variant %q (known: %v)", name, names)
}

// HostRotation reports whether the variant's rotation angles are computed
// on the host and fed to a graph as cos/sin: RoPE and the fixed random
// tables. Learned tables are variables during training, so their angles are
// computed in-graph there (and on the host once exported).
func (v Variant) HostRotation() bool {
	return v.Rotation == RotationRoPE || (v.Rotation == RotationAccumulated && !v.Learned)
}

// HasAngleTable reports whether the variant's weights hold an angle table.
func (v Variant) HasAngleTable() bool { return v.Rotation == RotationAccumulated }

// NativeTrainer reports whether model/nativetrain can train the variant
// (every registry entry today, PaTH included; see GomlxOnly).
func (v Variant) NativeTrainer() bool { return !v.GomlxOnly }
