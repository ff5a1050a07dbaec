package evaluate

import (
	"strings"
	"testing"
)

// Validate enforces what the docs say: powers of two from 1 to
// MaxMultiplier, nothing longer, nothing between.
func TestValidateMultipliers(t *testing.T) {
	ok := Config{Variant: "rope", Context: 8, Windows: 2, Multipliers: Multipliers()}
	if err := ok.Validate(); err != nil {
		t.Fatalf("every allowed multiplier %v: %v", Multipliers(), err)
	}
	if got := Multipliers(); got[0] != 1 || got[len(got)-1] != MaxMultiplier {
		t.Fatalf("Multipliers() = %v, want 1 .. %d", got, MaxMultiplier)
	}
	for _, bad := range []int{2 * MaxMultiplier, 3, 0, -4} {
		c := ok
		c.Multipliers = []int{1, bad}
		err := c.Validate()
		if err == nil {
			t.Errorf("multipliers [1 %d]: no error", bad)
			continue
		}
		if !strings.Contains(err.Error(), "set length_multipliers") {
			t.Errorf("multipliers [1 %d]: error %q does not say the fix", bad, err)
		}
	}
}
