package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"routebench/stages/evaluate"
)

// The registrations' seeds, machine-readable (registrations.json, written
// with each pre-registration in docs/statistics.md): which seeds each claim
// family was registered to be confirmed on. A family's verdict is
// confirmatory exactly when every seed it was judged on is one of its
// registered confirmatory seeds; no list of "exploratory" seeds is typed
// into the code.

//go:embed registrations.json
var registrationsJSON []byte

// Registration is one pre-registered family of claims.
type Registration struct {
	Family       string   `json:"family"`
	Suffix       string   `json:"suffix"` // the claims' ID suffix
	Registered   string   `json:"registered"`
	Issue        int      `json:"issue"`
	Confirmatory []uint64 `json:"confirmatory_seeds"`
	// FoundInvalid, when set, is the one-sentence reason the criterion was
	// found invalid after its run: the rows stay as registered, marked.
	FoundInvalid string `json:"found_invalid,omitempty"`
}

type registry struct {
	LookedAt []uint64       `json:"looked_at"`
	Families []Registration `json:"families"`
}

var loadRegistry = sync.OnceValues(func() (registry, error) { return parseRegistry(registrationsJSON) })

// parseRegistry reads registrations.json and checks it: every family has a
// suffix and confirmatory seeds, and no suffix is listed twice.
func parseRegistry(b []byte) (registry, error) {
	var r registry
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("report: stages/report/registrations.json: %w (fix the file's JSON)", err)
	}
	seen := map[string]bool{}
	for _, f := range r.Families {
		if f.Suffix == "" || len(f.Confirmatory) == 0 || seen[f.Suffix] {
			return r, fmt.Errorf("report: stages/report/registrations.json: family %q needs a unique suffix and its confirmatory seeds (suffix %q, seeds %v)", f.Family, f.Suffix, f.Confirmatory)
		}
		seen[f.Suffix] = true
	}
	return r, nil
}

// registrationOf is the family whose claims end in suffix. A family the
// file does not list has no confirmatory seed: its verdicts are
// exploratory on any seeds.
func registrationOf(suffix string) Registration {
	r, err := loadRegistry()
	if err != nil {
		panic(err) // the embedded file is checked by TestRegistrations
	}
	for _, f := range r.Families {
		if f.Suffix == suffix {
			return f
		}
	}
	return Registration{Family: strings.TrimPrefix(suffix, "-"), Suffix: suffix}
}

// ConfirmatoryOn reports whether a verdict judged on seeds is
// confirmatory: seeds are known, and every one is registered.
func (r Registration) ConfirmatoryOn(seeds []uint64) bool {
	if len(seeds) == 0 {
		return false
	}
	for _, s := range seeds {
		if !slices.Contains(r.Confirmatory, s) {
			return false
		}
	}
	return true
}

// selectSeeds is the runs a family reads: when the run has any of the
// family's confirmatory seeds, those alone (a family is judged on the
// seeds it was registered on, not on seeds added for another family);
// otherwise every seed (its verdicts then exploratory). seeds nil (not
// known) keeps every run.
func (r Registration) selectSeeds(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]map[string]*evaluate.Result, []uint64) {
	if len(seeds) != len(perSeed) {
		return perSeed, seeds
	}
	var ps []map[string]*evaluate.Result
	var ss []uint64
	for i, s := range seeds {
		if slices.Contains(r.Confirmatory, s) {
			ps, ss = append(ps, perSeed[i]), append(ss, s)
		}
	}
	if len(ps) == 0 {
		return perSeed, seeds
	}
	return ps, ss
}

// usedSeeds are the seeds of the runs that have every variant in vs.
func usedSeeds(perSeed []map[string]*evaluate.Result, seeds []uint64, vs ...string) []uint64 {
	if len(seeds) != len(perSeed) {
		return nil
	}
	var out []uint64
	for _, i := range seedsWith(perSeed, vs...) {
		out = append(out, seeds[i])
	}
	return out
}
