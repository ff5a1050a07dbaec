package evaluate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"routebench/model/nativeeval"
)

// refEigen is gonum's symmetric eigen-solver (LAPACK dsyev's algorithm),
// sorted: the float64 reference for symEigenvalues.
func refEigen(t *testing.T, a []float64, n int) []float64 {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(n, append([]float64(nil), a...)), false) {
		t.Fatal("gonum EigenSym did not converge")
	}
	return es.Values(nil)
}

func sortedEigen(a []float64, n int) []float64 {
	ev := symEigenvalues(a, n)
	slices.Sort(ev)
	return ev
}

// TestSymEigenvalues: known spectra (diagonal, 2 x 2 in closed form,
// Q diag Q^T with Q a product of reflections, a repeated eigenvalue) and
// random symmetric matrices against gonum, to 1e-12 of the matrix's scale.
func TestSymEigenvalues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(name string, a []float64, n int, want []float64) {
		t.Helper()
		got := sortedEigen(a, n)
		var scale float64
		for _, x := range a {
			scale = math.Max(scale, math.Abs(x))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+scale)*float64(n) {
				t.Fatalf("%s: eigenvalues %v, want %v", name, got, want)
			}
		}
	}
	check("diagonal", []float64{3, 0, 0, 0, -1, 0, 0, 0, 2}, 3, []float64{-1, 2, 3})
	check("1 x 1", []float64{-0.25}, 1, []float64{-0.25})
	// [[a, b], [b, c]]: (a + c)/2 -+ sqrt(((a - c)/2)^2 + b^2).
	a, b, c := 0.3, -1.7, 2.2
	h := math.Sqrt((a-c)*(a-c)/4 + b*b)
	check("2 x 2", []float64{a, b, b, c}, 2, []float64{(a+c)/2 - h, (a+c)/2 + h})
	for _, n := range []int{4, 16, 32} {
		// Q diag(lambda) Q^T, Q = a product of n random reflections.
		want := make([]float64, n)
		for i := range want {
			want[i] = r.NormFloat64()
		}
		if n == 16 {
			want[3] = want[7] // a repeated eigenvalue
		}
		Q := identity(n)
		for k := 0; k < n; k++ {
			v := randUnit(r, n)
			Q = matMul(Q, householderMatrix(v, 2), n)
		}
		D := make([]float64, n*n)
		for i, x := range want {
			D[i*n+i] = x
		}
		A := matMul(matMul(Q, D, n), transpose(Q, n), n)
		symmetrize(A, n)
		slices.Sort(want)
		check("Q diag Q^T", A, n, want)
		// a random symmetric matrix against gonum
		R := make([]float64, n*n)
		for i := range R {
			R[i] = r.NormFloat64()
		}
		symmetrize(R, n)
		check("random vs gonum", R, n, refEigen(t, R, n))
	}
}

// TestStepGapOf: sums of beta w w^T with known means, including the d = 1
// case where a step with beta > 1 makes the mean negative (the norm is the
// largest |eigenvalue|, not the largest eigenvalue), directions that miss
// a subspace (no gap), and random steps against gonum on I - S/n.
func TestStepGapOf(t *testing.T) {
	sumOf := func(d int, ws [][]float64, betas []float64) nativeeval.PathStepSum {
		s := nativeeval.PathStepSum{D: d, Count: len(ws), Sum: make([]float64, d*d)}
		for k, w := range ws {
			for r := 0; r < d; r++ {
				for c := 0; c < d; c++ {
					s.Sum[r*d+c] += betas[k] * w[r] * w[c]
				}
			}
		}
		return s
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("%s = %.15g, want %.15g", name, got, want)
		}
	}
	// Every basis direction once with beta = 1: E[H] = (1 - 1/d) I.
	const d = 8
	var ws [][]float64
	var bs []float64
	for k := 0; k < d; k++ {
		w := make([]float64, d)
		w[k] = 1
		ws, bs = append(ws, w), append(bs, 1)
	}
	g := stepGapOf(sumOf(d, ws, bs))
	near("basis: op norm", g.OpNorm, 1-1.0/d)
	near("basis: gap", g.Gap, 1.0/d)
	near("basis: mean beta", g.MeanBeta, 1)
	if g.Dim != d || g.Tokens != d {
		t.Fatalf("basis: dim %d tokens %d, want %d and %d", g.Dim, g.Tokens, d, d)
	}
	// Directions in the first two coordinates only: the rest is untouched.
	g = stepGapOf(sumOf(d, ws[:2], bs[:2]))
	near("subspace: gap", g.Gap, 0)
	near("subspace: eig min", g.EigMin, 0.5)
	// d = 1, beta = 1.5: E[H] = -0.5, norm 0.5.
	g = stepGapOf(sumOf(1, [][]float64{{1}}, []float64{1.5}))
	near("d = 1: op norm", g.OpNorm, 0.5)
	near("d = 1: eig max", g.EigMax, -0.5)
	// Random unit directions and strengths in (0, 2) against gonum; the
	// trace bound gap <= MeanBeta / d (stepgap.go) holds.
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{2, 16, 32} {
		ws, bs = nil, nil
		for k := 0; k < 200; k++ {
			ws, bs = append(ws, randUnit(r, n)), append(bs, 2*r.Float64())
		}
		s := sumOf(n, ws, bs)
		M := identity(n)
		for i := range M {
			M[i] -= s.Sum[i] / float64(s.Count)
		}
		ev := refEigen(t, M, n)
		want := math.Max(math.Abs(ev[0]), math.Abs(ev[n-1]))
		g := stepGapOf(s)
		near("random: op norm", g.OpNorm, want)
		if g.Gap > g.MeanBeta/float64(n)+1e-12 || g.OpNorm != g.EigMax {
			t.Fatalf("d = %d: gap %.4g above the trace bound %.4g, or the norm %.4g is not the largest eigenvalue %.4g", n, g.Gap, g.MeanBeta/float64(n), g.OpNorm, g.EigMax)
		}
	}
}

// TestStepSumsPool: windows add up by (layer, head), and a window with
// another layout is an error naming both.
func TestStepSumsPool(t *testing.T) {
	w := func(count int, x float64) []nativeeval.PathStepSum {
		return []nativeeval.PathStepSum{{Layer: 0, Head: 0, D: 1, Count: count, Sum: []float64{x}},
			{Layer: 0, Head: 1, D: 1, Count: count, Sum: []float64{2 * x}}}
	}
	var a stepSums
	for _, ws := range [][]nativeeval.PathStepSum{w(3, 1.5), w(5, 0.5)} {
		if err := a.add(ws); err != nil {
			t.Fatal(err)
		}
	}
	g := a.gaps()
	if len(g) != 2 || g[0].Tokens != 8 || math.Abs(g[0].MeanBeta-2.0/8) > 1e-15 || math.Abs(g[1].MeanBeta-4.0/8) > 1e-15 {
		t.Fatalf("pooled gaps %+v, want 8 tokens and mean beta 0.25, 0.5", g)
	}
	if err := a.add(w(1, 1)[:1]); err == nil {
		t.Fatal("a window with one step sum after windows with two: no error")
	}
}

func identity(n int) []float64 {
	m := make([]float64, n*n)
	for i := 0; i < n; i++ {
		m[i*n+i] = 1
	}
	return m
}

func randUnit(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	var s float64
	for i := range v {
		v[i] = r.NormFloat64()
		s += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(s)
	}
	return v
}

// householderMatrix is I - beta v v^T.
func householderMatrix(v []float64, beta float64) []float64 {
	n := len(v)
	m := identity(n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			m[i*n+j] -= beta * v[i] * v[j]
		}
	}
	return m
}

func matMul(a, b []float64, n int) []float64 {
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			for j := 0; j < n; j++ {
				c[i*n+j] += a[i*n+k] * b[k*n+j]
			}
		}
	}
	return c
}

func transpose(a []float64, n int) []float64 {
	t := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t[j*n+i] = a[i*n+j]
		}
	}
	return t
}

// symmetrize makes a exactly symmetric (the rounding of products is not).
func symmetrize(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			x := (a[i*n+j] + a[j*n+i]) / 2
			a[i*n+j], a[j*n+i] = x, x
		}
	}
}
