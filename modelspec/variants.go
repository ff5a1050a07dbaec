package modelspec

import (
	"fmt"
	pathpkg "path"
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
	// KerpleLog: KERPLE's trained logarithmic distance bias
	// -p_h log(1 + a_h (i-j)) per block and head (modelspec/kerple.go).
	KerpleLog bool
	Learned   bool // the accumulated angle table is a trained variable
	// AngleProj: the accumulated per-position angles come from a per-block
	// projection of the block's normed input (theta^l_t = a^l_t W^l_ang,
	// modelspec/angleproj.go) instead of a per-token table: no angle table,
	// one rotation per block.
	AngleProj bool
	// PaTH and FoX (modelspec/householder.go): data-dependent Householder
	// transport of the keys, and FoX's forgetting gate on top of it.
	Householder bool // logit_ij = q_i^T H_i ... H_{j+1} k_j, H_t = I - beta_t w_t w_t^T
	ForgetGate  bool // logits += sum_{t=j+1..i} g_t, g_t = logsigmoid(linear(x_t)) per head
	// AngleInit is the table an accumulated variant starts from
	// (AngleInitRandom or AngleInitZero; InitialAngles builds it): fixed for
	// random-*, the starting point of training for learned-*.
	AngleInit string
	// AngleLR multiplies the learning rate of a learned angle table
	// (LRScale reads it; 0 means 1).
	AngleLR float64
	// OptIn variants are trained only when a profile names them: they are
	// in Variants but not in DefaultVariants.
	OptIn bool
	Doc   string
	// GomlxOnly marks a variant with a part that model/nativetrain does not
	// implement (none today): config validation refuses trainer "native"
	// for it and the planner trains it with gomlx (NativeTrainer).
	GomlxOnly bool
}

// Initialisations of the angle table (Variant.AngleInit).
const (
	AngleInitRandom = "random" // RandomAngleTable of the config's seed and sigmas
	AngleInitZero   = "zero"   // every angle 0: the model starts as nope and must learn its own angles
)

// AngleTable is the name of the angle table tensor [V, H, P] in weights
// files and checkpoints (and LRScale's parameter name for it).
const AngleTable = "angles"

// LearnedAngleLR is the angle table's learning-rate factor of learned-qk and
// learned-qkv. Adam moves an entry by at most about lr per step whatever the
// size of its gradient, so the sum of the schedule bounds how far an angle
// can travel: at the cpu profile (400 steps, lr 2e-3, warmup 40, cosine to
// 1e-4) that sum is 0.42 rad (TestAngleReach), below the random table's
// largest sigma (1 rad). Started from zero at the base rate, a learned
// table could never reach the angles random-* use; with a factor of 10 its
// reach is ~4.2 rad, past that scale, while one step (<= 0.02 rad) stays
// small against the 2 pi period.
const LearnedAngleLR = 10

// Families' documentation, composed into Variant.Doc.
const (
	docNoPE        = "no position signal; causality alone"
	docRoPE        = "RoPE: psi_i = i * 10000^(-2p/d_head), interleaved pairs"
	docRandom      = "q, k rotated by prefix sums of a fixed seeded table angles[V,H,P] ~ N(0, sigma_p^2)"
	docLearned     = "q, k rotated by prefix sums of a trained table angles[V,H,P] initialised to 0 (the model starts as nope and learns every angle), angle learning rate x10"
	docRandInit    = "; the table initialised instead from the random table of the same seed and trained at the base learning rate (the learned variants before 2026-12; their tables moved ~3% from random-*'s)"
	docValueRot    = "value transport (v_j rotated by psi_j, output by -psi_i)"
	docALiBiSuffix = "ALiBi bias -m_h (i-j), m_h = 2^(-8(h+1)/H)"
)

func kerpleLog() Variant {
	return Variant{Name: "kerple-log", Rotation: RotationNone, KerpleLog: true, Doc: docKerple}
}

func nope() Variant { return Variant{Name: "nope", Rotation: RotationNone, Doc: docNoPE} }
func rope() Variant { return Variant{Name: "rope", Rotation: RotationRoPE, Doc: docRoPE} }
func random() Variant {
	return Variant{Name: "random-qk", Rotation: RotationAccumulated, AngleInit: AngleInitRandom, Doc: docRandom}
}
func learned() Variant {
	return Variant{Name: "learned-qk", Rotation: RotationAccumulated, Learned: true, AngleInit: AngleInitZero,
		AngleLR: LearnedAngleLR, Doc: docLearned}
}

// withRandomInit starts a learned table from the random table at the base
// learning rate, under the name + "-randinit"; trained on request only.
func (v Variant) withRandomInit() Variant {
	v.Name += "-randinit"
	v.AngleInit, v.AngleLR, v.OptIn = AngleInitRandom, 1, true
	v.Doc += docRandInit
	return v
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
	kerpleLog(),
	random(),
	random().withValueTransport(),
	random().withValueTransport().withALiBi("random-qkv-alibi"),
	learned(),
	learned().withValueTransport(),
	learnedProj(),
	learned().withRandomInit(),
	learned().withValueTransport().withRandomInit(),
	path(),
	path().withForgetGate(),
}

// Variants lists every registry name in canonical order.
func Variants() []string {
	names := make([]string, len(registry))
	for i, v := range registry {
		names[i] = v.Name
	}
	return names
}

// DefaultVariants lists the variants a profile trains when it names none:
// the registry without its opt-in entries, in canonical order.
func DefaultVariants() []string {
	var names []string
	for _, v := range registry {
		if !v.OptIn {
			names = append(names, v.Name)
		}
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
	names := Variants()
	sort.Strings(names)
	return Variant{}, fmt.Errorf("modelspec: unknown variant %q (known: %v)", name, names)
}

// HostRotation reports whether the variant's rotation angles are computed
// on the host and fed to a graph as cos/sin: RoPE and the fixed random
// tables. Learned tables are variables during training, so their angles are
// computed in-graph there (and on the host once exported). Projected angles
// (AngleProj) depend on each block's input: never on the host.
func (v Variant) HostRotation() bool {
	return v.Rotation == RotationRoPE || (v.HasAngleTable() && !v.Learned)
}

// LRScale is the factor on the learning rate of the trained tensor named
// param: AngleLR for a learned variant's angle table and for the angle
// projections of AngleProj (block%03d/angle_proj), 1 for every other
// tensor. Every trainer multiplies its schedule's rate by it.
func (v Variant) LRScale(param string) float64 {
	if v.AngleLR > 0 && ((v.Learned && param == AngleTable) || (v.AngleProj && pathpkg.Base(param) == AngleProjName)) {
		return v.AngleLR
	}
	return 1
}

// HasAngleTable reports whether the variant's weights hold an angle table
// (every accumulated variant but the projected ones).
func (v Variant) HasAngleTable() bool { return v.Rotation == RotationAccumulated && !v.AngleProj }

// DrawsRandomAngles reports whether the variant's angle table is drawn
// from the config's sigmas (random-*, learned-*-randinit): only these read
// sigma_min and sigma_max.
func (v Variant) DrawsRandomAngles() bool { return v.HasAngleTable() && v.AngleInit == AngleInitRandom }

// NativeTrainer reports whether model/nativetrain can train the variant
// (every registry entry today, PaTH included; see GomlxOnly).
func (v Variant) NativeTrainer() bool { return !v.GomlxOnly }
