package theory

import "fmt"

// Criterion is one PASS/FAIL test inside a check, with the numbers that
// decided it.
type Criterion struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// criteria collects the criteria of one check; a criterion fails as soon as
// one of its comparisons does, and keeps the first failing comparison as its
// detail, since that is what a reader needs to see.
type criteria struct {
	list []Criterion
	idx  map[string]int
}

// check records one comparison under name; detail is formatted only when it
// is kept.
func (c *criteria) check(name string, ok bool, format string, args ...any) {
	if c.idx == nil {
		c.idx = map[string]int{}
	}
	i, seen := c.idx[name]
	if !seen {
		c.idx[name] = len(c.list)
		c.list = append(c.list, Criterion{Name: name, Pass: ok, Detail: fmt.Sprintf(format, args...)})
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

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
