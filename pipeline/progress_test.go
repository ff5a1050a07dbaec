package pipeline

import (
	"testing"
	"time"
)

// Progress lines print counts with separators and rates with SI prefixes,
// never raw floats such as "14624204.13/s", and rates under one a second
// per minute or per item, never with a milli prefix ("855.04m/s").
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		el          time.Duration
		want        string
	}{
		{35090, 35090, 20 * time.Millisecond, "tokenize: 35,090/35,090 (100%, 1.75M/s, ETA 0s)"},
		{14624204, 29248408, time.Second, "tokenize: 14,624,204/29,248,408 (50%, 14.62M/s, ETA 1s)"},
		{12, 400, 3 * time.Second, "tokenize: 12/400 (3%, 4/s, ETA 1m37s)"},
		{0, 400, time.Second, "tokenize: 0/400"},
		{1, 1, time.Second, "tokenize: 1/1 (100%, 1/s, ETA 0s)"},
		{171, 200, 200 * time.Second, "tokenize: 171/200 (86%, 51.3/min, ETA 34s)"},
		{1, 200, 60 * time.Second, "tokenize: 1/200 (0%, 1/min, ETA 3h19m0s)"},
		{3, 200, 10 * time.Minute, "tokenize: 3/200 (2%, 3m20s/item, ETA 10h56m40s)"},
	} {
		if got := progressLine("tokenize", tc.done, tc.total, tc.el); got != tc.want {
			t.Errorf("progressLine(%d, %d, %s) = %q, want %q", tc.done, tc.total, tc.el, got, tc.want)
		}
	}
}
