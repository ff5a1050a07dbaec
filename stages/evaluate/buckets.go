package evaluate

// Bucket is the mean loss over positions [Start, End) of all windows.
type Bucket struct {
	Start int     `json:"start"`
	End   int     `json:"end"`
	Loss  float64 `json:"loss"`
}

// PositionBuckets averages per-position losses (window x position) into
// buckets [0,T), [T,2T), [2T,4T), ...: where a model starts to fail shows
// as the first bucket whose loss rises.
func PositionBuckets(losses [][]float32, T int) []Bucket {
	if len(losses) == 0 {
		return nil
	}
	L := len(losses[0])
	var out []Bucket
	for start, end := 0, T; start < L; start, end = end, 2*end {
		if end > L {
			end = L
		}
		s, n := 0.0, 0
		for _, w := range losses {
			for _, v := range w[start:end] {
				s += float64(v)
				n++
			}
		}
		out = append(out, Bucket{Start: start, End: end, Loss: s / float64(n)})
	}
	return out
}
