package native

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowPasses checks each row pass against a float64 reference (each
// result within one rounding of its float32 formula) and the vector
// kernels against the portable loops bit for bit, on lengths around the
// 16-lane groups, with -Inf entries in the scores (masked keys).
func TestRowPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ninf := float32(math.Inf(-1))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 48, 64, 77, 130} {
		x, y := make([]float32, n), make([]float32, n)
		for j := range x {
			x[j], y[j] = float32(r.NormFloat64()*4), float32(r.Float64())
			if j%9 == 4 {
				x[j] = ninf
			}
		}
		a, s, rd := float32(r.NormFloat64()), float32(0.17677669), float32(r.NormFloat64())
		type pass struct {
			name string
			run  func(x []float32) float32 // the pass on a copy; ScaleMax's max
			ref  func(j int) float64       // element j, in float64
			mag  func(j int) float64       // the size its roundings scale with
		}
		abs := func(v float32) float64 { return math.Abs(float64(v)) }
		prod := func(j int) float64 { return abs(x[j]) * abs(s) }
		passes := []pass{
			{"ScaleMax", func(x []float32) float32 { return ScaleMax(x, s) }, func(j int) float64 { return float64(x[j]) * float64(s) }, prod},
			{"Scale", func(x []float32) float32 { Scale(x, s); return 0 }, func(j int) float64 { return float64(x[j]) * float64(s) }, prod},
			{"AddOffsets", func(x []float32) float32 { AddOffsets(x, a, y); return 0 }, func(j int) float64 { return float64(x[j]) + float64(a) + float64(y[j]) },
				func(j int) float64 { return abs(x[j]) + 2*(abs(a)+abs(y[j])) }},
			{"Add", func(x []float32) float32 { Add(x, y); return 0 }, func(j int) float64 { return float64(x[j]) + float64(y[j]) },
				func(j int) float64 { return abs(x[j]) + abs(y[j]) }},
			{"SoftmaxGrad", func(x []float32) float32 { SoftmaxGrad(x, y, rd, s); return 0 },
				func(j int) float64 { return float64(y[j]) * (float64(x[j]) - float64(rd)) * float64(s) },
				func(j int) float64 { return 3 * abs(y[j]) * (abs(x[j]) + abs(rd)) * abs(s) }},
		}
		for _, p := range passes {
			var got [2][]float32
			var mx [2]float32
			for k, vec := range []bool{false, true} {
				was := SetVectorKernels(vec)
				got[k] = append([]float32(nil), x...)
				mx[k] = p.run(got[k])
				SetVectorKernels(was)
			}
			wantMax := math.Inf(-1)
			for j := range x {
				want := p.ref(j)
				wantMax = math.Max(wantMax, want)
				if g := float64(got[0][j]); g != want && !(math.Abs(g-want) <= 6e-8*p.mag(j)) {
					t.Errorf("%s n=%d: portable [%d] = %v, float64 %v", p.name, n, j, g, want)
				}
				if math.Float32bits(got[1][j]) != math.Float32bits(got[0][j]) {
					t.Errorf("%s n=%d: vector [%d] = %v, portable %v", p.name, n, j, got[1][j], got[0][j])
				}
			}
			if p.name == "ScaleMax" {
				if mx[0] != mx[1] || float64(mx[0]) != float64(float32(wantMax)) {
					t.Errorf("ScaleMax n=%d: max portable %v vector %v, float64 %v", n, mx[0], mx[1], wantMax)
				}
			}
		}
	}
}

// TestNormPasses checks Mul, AddMul, NormScale and NormGrad (with and
// without the residual) as TestRowPasses does: each output within the
// roundings of its formula of a float64 reference, and the vector kernels
// equal to the portable loops bit for bit.
func TestNormPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 48, 128, 130} {
		vec := func() []float32 {
			v := make([]float32, n)
			for j := range v {
				v[j] = float32(r.NormFloat64() * 2)
			}
			return v
		}
		x, y, z := vec(), vec(), vec()
		s, dot := float32(0.37), float32(r.NormFloat64())
		abs := func(v float32) float64 { return math.Abs(float64(v)) }
		f := func(v float32) float64 { return float64(v) }
		type out struct {
			name     string
			got      func() []float32 // the pass's output on fresh copies
			ref, mag func(j int) float64
		}
		outs := []out{
			{"Mul", func() []float32 { d := make([]float32, n); Mul(d, x, y); return d },
				func(j int) float64 { return f(x[j]) * f(y[j]) }, func(j int) float64 { return abs(x[j]) * abs(y[j]) }},
			{"AddMul", func() []float32 { d := append([]float32(nil), z...); AddMul(d, x, y); return d },
				func(j int) float64 { return f(z[j]) + f(x[j])*f(y[j]) }, func(j int) float64 { return abs(z[j]) + 2*abs(x[j])*abs(y[j]) }},
			{"NormScale.n", func() []float32 { a, b := make([]float32, n), make([]float32, n); NormScale(a, b, x, y, s); return a },
				func(j int) float64 { return f(x[j]) * f(s) }, func(j int) float64 { return abs(x[j]) * abs(s) }},
			{"NormScale.a", func() []float32 { a, b := make([]float32, n), make([]float32, n); NormScale(a, b, x, y, s); return b },
				func(j int) float64 { return f(x[j]) * f(s) * f(y[j]) }, func(j int) float64 { return 2 * abs(x[j]) * abs(s) * abs(y[j]) }},
			{"NormGrad", func() []float32 { d := append([]float32(nil), x...); NormGrad(d, y, nil, s, dot); return d },
				func(j int) float64 { return f(s) * (f(x[j]) - f(y[j])*f(dot)) },
				func(j int) float64 { return 3 * abs(s) * (abs(x[j]) + abs(y[j])*abs(dot)) }},
			{"NormGrad.res", func() []float32 { d := append([]float32(nil), x...); NormGrad(d, y, z, s, dot); return d },
				func(j int) float64 { return f(s)*(f(x[j])-f(y[j])*f(dot)) + f(z[j]) },
				func(j int) float64 { return 4*abs(s)*(abs(x[j])+abs(y[j])*abs(dot)) + abs(z[j]) }},
		}
		for _, o := range outs {
			got := onBothSets(o.got)
			for j := 0; j < n; j++ {
				if g, want := float64(got[0][j]), o.ref(j); g != want && !(math.Abs(g-want) <= 6e-8*o.mag(j)) {
					t.Errorf("%s n=%d: portable [%d] = %v, float64 %v", o.name, n, j, g, want)
				}
				if math.Float32bits(got[1][j]) != math.Float32bits(got[0][j]) {
					t.Errorf("%s n=%d: vector [%d] = %v, portable %v", o.name, n, j, got[1][j], got[0][j])
				}
			}
		}
	}
}

// TestRotatePairs checks RotatePairs both ways round against float64 and
// the vector kernel against the portable loop bit for bit.
func TestRotatePairs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 2, 14, 16, 18, 32, 64, 130} {
		u, cs, sn := make([]float32, n), make([]float32, n), make([]float32, n)
		for e := 0; e < n; e += 2 {
			psi := r.Float64() * 2 * math.Pi
			cs[e], sn[e] = float32(math.Cos(psi)), float32(math.Sin(psi))
			cs[e+1], sn[e+1] = cs[e], sn[e]
			u[e], u[e+1] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for _, sign := range []float32{1, -1} {
			got := onBothSets(func() []float32 { x := append([]float32(nil), u...); RotatePairs(x, cs, sn, sign); return x })
			for e := 0; e < n; e += 2 {
				c, s := float64(cs[e]), float64(sign)*float64(sn[e])
				u0, u1 := float64(u[e]), float64(u[e+1])
				mag := 2 * (math.Abs(u0) + math.Abs(u1))
				for i, want := range []float64{u0*c - u1*s, u0*s + u1*c} {
					if g := float64(got[0][e+i]); math.Abs(g-want) > 6e-8*mag {
						t.Errorf("sign %v n=%d: portable [%d] = %v, float64 %v", sign, n, e+i, g, want)
					}
					if math.Float32bits(got[1][e+i]) != math.Float32bits(got[0][e+i]) {
						t.Errorf("sign %v n=%d: vector [%d] = %v, portable %v", sign, n, e+i, got[1][e+i], got[0][e+i])
					}
				}
			}
		}
	}
}

// TestGELUGradMul checks GELUGradMul against the float64 derivative of the
// tanh GELU (from the same float32 tanh) and the vector kernel against the
// portable loop bit for bit, on lengths around the 16-lane groups.
func TestGELUGradMul(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const k, c = 0.7978845608028654, 3 * 0.044715
	for _, n := range []int{0, 1, 15, 16, 17, 48, 130, 1751} {
		u, th, du := make([]float32, n), make([]float32, n), make([]float32, n)
		for j := range u {
			x := float64(j)*24/float64(max(n, 1)) - 12 // -12..12, through the tails
			if j%5 == 1 {
				x = r.NormFloat64()
			}
			u[j] = float32(x)
			v := float64(u[j])
			th[j] = float32(math.Tanh(k * (v + 0.044715*v*v*v)))
			du[j] = float32(r.NormFloat64())
		}
		got := onBothSets(func() []float32 { x := append([]float32(nil), du...); GELUGradMul(x, u, th); return x })
		for j := range u {
			x, tt, d := float64(u[j]), float64(th[j]), float64(du[j])
			want := d * (0.5*(1+tt) + 0.5*x*(1-tt*tt)*k*(1+c*x*x))
			mag := math.Abs(d) * (0.5*math.Abs(1+tt) + 0.5*math.Abs(x)*(1+tt*tt)*k*(1+c*x*x))
			if g := float64(got[0][j]); math.Abs(g-want) > 6e-7*mag {
				t.Errorf("n=%d: portable [%d] (u=%v) = %v, float64 %v", n, j, u[j], g, want)
			}
			if math.Float32bits(got[1][j]) != math.Float32bits(got[0][j]) {
				t.Errorf("n=%d: vector [%d] (u=%v) = %v, portable %v", n, j, u[j], got[1][j], got[0][j])
			}
		}
	}
}

// TestSiLU checks SiLU against float64 on both kernel sets and, on each,
// bit for bit against its scalar definition from that set's ExpShift (the
// trainer's PaTH directions were computed so before it was vectorised).
func TestSiLU(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	forEachKernelSet(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 15, 16, 17, 48, 130} {
			y := make([]float32, n)
			for j := range y {
				y[j] = float32(r.NormFloat64() * 4)
				if j%11 == 3 {
					y[j] = float32(math.Copysign(0, -1))
				}
			}
			w, sg := make([]float32, n), make([]float32, n)
			SiLU(w, sg, y)
			e := make([]float32, n)
			for j, v := range y {
				e[j] = -float32(math.Abs(float64(v)))
			}
			ExpShift(e, 0)
			for j, v := range y {
				s := 1 / (1 + e[j])
				if v < 0 {
					s *= e[j]
				}
				if math.Float32bits(sg[j]) != math.Float32bits(s) || math.Float32bits(w[j]) != math.Float32bits(v*s) {
					t.Errorf("n=%d [%d] y=%v: sg, w = %v, %v; scalar %v, %v", n, j, v, sg[j], w[j], s, v*s)
				}
				want := 1 / (1 + math.Exp(-float64(v)))
				if math.Abs(float64(sg[j])-want) > 1e-6*want {
					t.Errorf("n=%d [%d] y=%v: sigmoid %v, float64 %v", n, j, v, sg[j], want)
				}
			}
		}
	})
}

// TestSiLUGradMul checks SiLUGradMul against float64 and the vector kernel
// against the portable loop bit for bit.
func TestSiLUGradMul(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 15, 16, 17, 48, 130} {
		y, sg, dy := make([]float32, n), make([]float32, n), make([]float32, n)
		for j := range y {
			y[j] = float32(r.NormFloat64() * 4)
			sg[j] = float32(1 / (1 + math.Exp(-float64(y[j]))))
			dy[j] = float32(r.NormFloat64())
		}
		got := onBothSets(func() []float32 { x := append([]float32(nil), dy...); SiLUGradMul(x, y, sg); return x })
		for j := range y {
			s, x, d := float64(sg[j]), float64(y[j]), float64(dy[j])
			want := d * s * (1 + x*(1-s))
			mag := math.Abs(d) * s * (1 + math.Abs(x)*(1+s))
			if g := float64(got[0][j]); math.Abs(g-want) > 4e-7*mag {
				t.Errorf("n=%d [%d]: portable %v, float64 %v", n, j, g, want)
			}
			if math.Float32bits(got[1][j]) != math.Float32bits(got[0][j]) {
				t.Errorf("n=%d [%d]: vector %v, portable %v", n, j, got[1][j], got[0][j])
			}
		}
	}
}

// onBothSets returns run's output under the portable loops ([0]) and under
// the vector kernels ([1]).
func onBothSets(run func() []float32) (got [2][]float32) {
	for k, v := range []bool{false, true} {
		was := SetVectorKernels(v)
		got[k] = run()
		SetVectorKernels(was)
	}
	return got
}

// TestRotateRows checks RotateRows and UnrotateRows bit for bit against
// their Go expressions, (u0*c - u1*s)*scale, (u0*s + u1*c)*scale and
// (u0*c + u1*s)*scale, (u1*c - u0*s)*scale, on strided rows whose length
// is and is not a multiple of 16 (the assembly's part and the Go tail),
// and that they write nothing between the rows.
func TestRotateRows(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, inverse := range []bool{false, true} {
			rotate, name := RotateRows, "RotateRows"
			if inverse {
				rotate, name = UnrotateRows, "UnrotateRows"
			}
			for _, n := range []int{2, 16, 32, 38} {
				const rows = 5
				lds, ldc, ldd := n+6, n+4, n+2
				src, cs := randSlice(r, rows*lds, 1), randSlice(r, rows*ldc, 1)
				for _, scale := range []float32{1, 0.1767767} {
					dst := make([]float32, rows*ldd)
					for i := range dst {
						dst[i] = 7
					}
					rotate(dst, ldd, src, lds, cs, ldc, rows, n, scale)
					for i := 0; i < rows; i++ {
						for e := 0; e < ldd; e += 2 {
							g0, g1 := dst[i*ldd+e], dst[i*ldd+e+1]
							if e >= n {
								if g0 != 7 || g1 != 7 {
									t.Fatalf("%s n=%d row %d: wrote %v %v past the row", name, n, i, g0, g1)
								}
								continue
							}
							c, s := cs[i*ldc+e], cs[i*ldc+e+1]
							u0, u1 := src[i*lds+e], src[i*lds+e+1]
							w0, w1 := (u0*c-u1*s)*scale, (u0*s+u1*c)*scale
							if inverse {
								w0, w1 = (u0*c+u1*s)*scale, (u1*c-u0*s)*scale
							}
							if math.Float32bits(g0) != math.Float32bits(w0) || math.Float32bits(g1) != math.Float32bits(w1) {
								t.Fatalf("%s n=%d scale=%v row %d pair %d: %v %v, want %v %v", name, n, scale, i, e/2, g0, g1, w0, w1)
							}
						}
					}
				}
			}
		}
	})
}
