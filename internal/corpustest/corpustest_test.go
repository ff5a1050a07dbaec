package corpustest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skipf instead of
// stopping the goroutine.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }
func (r *recorder) Skipf(format string, a ...any)  { r.skip = fmt.Sprintf(format, a...) }

func TestMissingFailsUnderCI(t *testing.T) {
	cause := errors.New("stat .cache/corpus: no such file")
	for _, ci := range []string{"", "1", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		Missing(r, cause)
		got, other := r.skip, r.fatal
		if ci != "" {
			got, other = r.fatal, r.skip
		}
		if got == "" || other != "" {
			t.Errorf("CI=%q: fatal %q, skip %q; want only the %s", ci, r.fatal, r.skip, map[bool]string{true: "fatal", false: "skip"}[ci != ""])
		}
		for _, want := range []string{"make corpus", cause.Error()} {
			if !strings.Contains(got, want) {
				t.Errorf("CI=%q: message %q does not name %q", ci, got, want)
			}
		}
	}
}
