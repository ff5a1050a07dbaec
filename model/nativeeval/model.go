package nativeeval

import (
	"fmt"
	"routebench/model/native"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// Model is a weights set prepared for the native forward pass: checked,
// with matrices packed for the sgemm kernels. It is read-only after Load
// and safe for concurrent LogProbs calls.
type Model struct {
	Arch   modelspec.Arch
	embed  []float32 // [V][D]
	layers []layer
	normf  []float32
	unemb  *native.PackedB // D x V
	angles []float32       // [V][H][P], accumulated variants only
	slopes []float32       // ALiBi slopes per head, nil without ALiBi
}

type layer struct {
	norm1, norm2 []float32
	wqkv         *native.PackedB // D x 3D: wq | wk | wv side by side
	wo           *native.PackedB // D x D
	w1           *native.PackedB // D x F
	b1           []float32
	w2           *native.PackedB // F x D
	b2           []float32
	path         *pathLayer      // PaTH (Arch.Householder) only
	angProj      *native.PackedB // D x H*P: learned-proj-qkv's angle projection (Arch.AngleProj) only
	// kerpleP and kerpleA are KERPLE's stored p_h and a_h ([H]; Arch.KerpleLog
	// only): the pass floors them and builds its bias table per layer
	// (kerpleTables), since the table's layout depends on the window length.
	kerpleP, kerpleA []float32
}

// Load checks that set holds every tensor ARCHITECTURE.md names for its
// Arch, with the right shapes, and prepares it.
func Load(set *weights.Set) (*Model, error) {
	if set == nil {
		return nil, fmt.Errorf("native: Load got a nil weights set")
	}
	a := set.Arch
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	where := fmt.Sprintf("%s/%s weights", a.Variant, a.Profile)
	get := func(name string, shape ...int) ([]float32, error) {
		x, err := set.Get(name, shape...)
		if err != nil {
			return nil, fmt.Errorf("native: loading %s: %w (re-export the weights with the train stage)", where, err)
		}
		return x, nil
	}
	V, D, F, H := a.Vocab, a.DModel, a.DHidden, a.Heads
	m := &Model{Arch: a}
	var err error
	if m.embed, err = get("embed", V, D); err != nil {
		return nil, err
	}
	if m.normf, err = get("normf", D); err != nil {
		return nil, err
	}
	un, err := get("unembed", D, V)
	if err != nil {
		return nil, err
	}
	m.unemb = native.PackB(un, D, V)
	if a.HasAngleTable() {
		if m.angles, err = get("angles", V, H, a.DHead()/2); err != nil {
			return nil, err
		}
	}
	if a.ALiBi {
		m.slopes = alibiSlopes(H)
	}
	for n := 0; n < a.Layers; n++ {
		p := fmt.Sprintf("block%03d/", n)
		var l layer
		var wq, wk, wv, wo, w1, w2 []float32
		for _, t := range []struct {
			dst   *[]float32
			name  string
			shape []int
		}{
			{&l.norm1, "norm1", []int{D}}, {&l.norm2, "norm2", []int{D}},
			{&wq, "wq", []int{D, D}}, {&wk, "wk", []int{D, D}}, {&wv, "wv", []int{D, D}}, {&wo, "wo", []int{D, D}},
			{&w1, "w1", []int{D, F}}, {&l.b1, "b1", []int{F}}, {&w2, "w2", []int{F, D}}, {&l.b2, "b2", []int{D}},
		} {
			if *t.dst, err = get(p+t.name, t.shape...); err != nil {
				return nil, err
			}
		}
		qkv := make([]float32, D*3*D)
		for r := 0; r < D; r++ {
			copy(qkv[r*3*D:], wq[r*D:(r+1)*D])
			copy(qkv[r*3*D+D:], wk[r*D:(r+1)*D])
			copy(qkv[r*3*D+2*D:], wv[r*D:(r+1)*D])
		}
		l.wqkv, l.wo, l.w1, l.w2 = native.PackB(qkv, D, 3*D), native.PackB(wo, D, D), native.PackB(w1, D, F), native.PackB(w2, F, D)
		if a.AngleProj {
			w, err := get(p+modelspec.AngleProjName, D, H*(a.DHead()/2))
			if err != nil {
				return nil, err
			}
			l.angProj = native.PackB(w, D, H*(a.DHead()/2))
		}
		if a.KerpleLog {
			if l.kerpleP, err = get(p+modelspec.KerpleP, H); err != nil {
				return nil, err
			}
			if l.kerpleA, err = get(p+modelspec.KerpleA, H); err != nil {
				return nil, err
			}
		}
		if a.Householder {
			if l.path, err = loadPath(a, func(name string, shape ...int) ([]float32, error) { return get(p+name, shape...) }); err != nil {
				return nil, err
			}
		}
		m.layers = append(m.layers, l)
	}
	return m, nil
}

// loadPath reads one block's PaTH tensors (ARCHITECTURE.md).
func loadPath(a modelspec.Arch, get func(name string, shape ...int) ([]float32, error)) (*pathLayer, error) {
	D, H, R, K := a.DModel, a.Heads, a.PathRank, a.PathConv
	pl := &pathLayer{K: K, nbg: H}
	var down, up, wb, wg []float32
	var err error
	for _, t := range []struct {
		dst   *[]float32
		name  string
		shape []int
	}{
		{&down, modelspec.PathDown, []int{D, R}}, {&up, modelspec.PathUp, []int{R, D}}, {&pl.conv, modelspec.PathConvW, []int{K, D}},
		{&wb, modelspec.PathWBeta, []int{D, H}}, {&pl.bbeta, modelspec.PathBBeta, []int{H}},
	} {
		if *t.dst, err = get(t.name, t.shape...); err != nil {
			return nil, err
		}
	}
	bg := wb
	if a.ForgetGate {
		if wg, err = get(modelspec.FoxWGate, D, H); err != nil {
			return nil, err
		}
		if pl.bgate, err = get(modelspec.FoxBGate, H); err != nil {
			return nil, err
		}
		pl.nbg = 2 * H
		bg = make([]float32, D*2*H)
		for r := 0; r < D; r++ {
			copy(bg[r*2*H:], wb[r*H:(r+1)*H])
			copy(bg[r*2*H+H:], wg[r*H:(r+1)*H])
		}
	}
	pl.down, pl.up, pl.wbg = native.PackB(down, D, R), native.PackB(up, R, D), native.PackB(bg, D, pl.nbg)
	return pl, nil
}
