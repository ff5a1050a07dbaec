package theory

import (
	"fmt"
	"strings"
)

// Criterion kinds. An empirical criterion can fail for a law that violates
// the theorem's conclusion, so it counts as evidence; an identity is true by
// construction (a bound every logit satisfies, lambda_max <= trace, a closed
// form that follows from E[M] alone for i.i.d. steps): it tests the code, and
// a FAIL means a bug, not a refuted claim.
const (
	Empirical = "empirical"
	Identity  = "identity"
)

// Criterion is one PASS/FAIL test inside a check, with the numbers that
// decided it.
type Criterion struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`            // Empirical or Identity
	Shows  string `json:"shows,omitempty"` // empirical only: what a PASS shows, in one line
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// Control is a law or setting that violates the claim, run through the same
// code as the check: it must FAIL the named empirical criterion, which shows
// that the criterion can fail. AsItMust is false when the control passed, and
// then the check fails too.
type Control struct {
	Name      string `json:"name"`
	Law       string `json:"law"`       // what the control is
	Criterion string `json:"criterion"` // the empirical criterion it must fail
	Failed    bool   `json:"failed"`
	AsItMust  bool   `json:"as_it_must"`
	Detail    string `json:"detail"` // the measured statistic against its tolerance
}

// newControl records a control's outcome on its criterion.
func newControl(name, law, criterion string, list []Criterion) Control {
	c := Control{Name: name, Law: law, Criterion: criterion}
	for _, cr := range list {
		if cr.Name == criterion {
			c.Failed, c.AsItMust, c.Detail = !cr.Pass, !cr.Pass, cr.Detail
			return c
		}
	}
	c.Detail = fmt.Sprintf("criterion %q was not evaluated (internal error)", criterion)
	return c
}

// criteria collects the criteria of one check; a criterion fails as soon as
// one of its comparisons does, and keeps the first failing comparison as its
// detail, since that is what a reader needs to see.
type criteria struct {
	list  []Criterion
	idx   map[string]int
	shows map[string]string // empirical criteria by name; every other is an identity
}

// empirical declares name as an empirical criterion with what it shows.
// Criteria not declared are identities.
func (c *criteria) empirical(name, shows string) {
	if c.shows == nil {
		c.shows = map[string]string{}
	}
	c.shows[name] = shows
}

// check records one comparison under name; detail is formatted only when it
// is kept.
func (c *criteria) check(name string, ok bool, format string, args ...any) {
	if c.idx == nil {
		c.idx = map[string]int{}
	}
	i, seen := c.idx[name]
	if !seen {
		kind, shows := Identity, ""
		if s, emp := c.shows[name]; emp {
			kind, shows = Empirical, s
		}
		c.idx[name] = len(c.list)
		c.list = append(c.list, Criterion{Name: name, Kind: kind, Shows: shows, Pass: ok, Detail: fmt.Sprintf(format, args...)})
		return
	}
	if c.list[i].Pass && !ok {
		c.list[i].Pass = false
		c.list[i].Detail = fmt.Sprintf(format, args...)
	}
}

// summary sets the detail of a criterion that passed (failing details win).
func (c *criteria) summary(name, format string, args ...any) {
	if i, ok := c.idx[name]; ok && c.list[i].Pass {
		c.list[i].Detail = fmt.Sprintf(format, args...)
	}
}

func (c *criteria) pass() bool {
	for _, x := range c.list {
		if !x.Pass {
			return false
		}
	}
	return len(c.list) > 0
}

// failedEmpirical names the empirical criteria that failed, for control details.
func failedEmpirical(list []Criterion) string {
	var f []string
	for _, c := range list {
		if c.Kind == Empirical && !c.Pass {
			f = append(f, c.Name)
		}
	}
	if len(f) == 0 {
		return "none"
	}
	return strings.Join(f, "; ")
}

// splitKinds separates empirical criteria from identities.
func splitKinds(list []Criterion) (emp, id []Criterion) {
	for _, c := range list {
		if c.Kind == Empirical {
			emp = append(emp, c)
		} else {
			id = append(id, c)
		}
	}
	return emp, id
}

func controlsFailed(cs []Control) bool {
	for _, c := range cs {
		if !c.AsItMust {
			return false
		}
	}
	return true
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
