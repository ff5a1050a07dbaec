package model

import (
	"fmt"
	"sort"
)

// Rotation kinds, as written in weights.Arch.Rotation.
const (
	RotationNone        = "none"
	RotationRoPE        = "rope"
	RotationAccumulated = "accumulated"
)

// Variant describes how one registry entry places positions in attention.
// The math of each family lives in its own file: position_rope.go,
// position_alibi.go, position_accumulated.go (nope has no position signal).
type Variant struct {
	Name     string
	Rotation string // RotationNone, RotationRoPE or RotationAccumulated
	ValueRot bool   // value transport: v_j rotated by psi_j, output by -psi_i
	ALiBi    bool   // distance bias -m_h (i-j)
	Learned  bool   // accumulated angle table is a trained variable
	Doc      string
}

var registry = []Variant{
	{Name: "nope", Rotation: RotationNone,
		Doc: "no position signal; causality alone"},
	{Name: "rope", Rotation: RotationRoPE,
		Doc: "RoPE: psi_i = i * 10000^(-2p/d_head), interleaved pairs"},
	{Name: "alibi", Rotation: RotationNone, ALiBi: true,
		Doc: "ALiBi: logits - m_h (i-j), m_h = 2^(-8(h+1)/H)"},
	{Name: "random-qk", Rotation: RotationAccumulated,
		Doc: "q, k rotated by prefix sums of a fixed seeded table angles[V,H,P] ~ N(0, sigma_p^2)"},
	{Name: "random-qkv", Rotation: RotationAccumulated, ValueRot: true,
		Doc: "random-qk plus value transport"},
	{Name: "learned-qk", Rotation: RotationAccumulated, Learned: true,
		Doc: "random-qk with the angle table trained (initialised from the same table)"},
	{Name: "learned-qkv", Rotation: RotationAccumulated, ValueRot: true, Learned: true,
		Doc: "learned-qk plus value transport"},
}

// Variants lists the registry names in canonical order.
func Variants() []string {
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
	names := Variants()
	sort.Strings(names)
	return Variant{}, fmt.Errorf("model: unknown variant %q (known: %v)", name, names)
}
