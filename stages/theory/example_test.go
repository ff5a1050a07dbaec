package theory_test

import (
	"context"
	"fmt"
	"os"

	"routebench/stages/theory"
)

// Run the stage at smoke sizes and print each check's verdict.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "theory")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	sum, err := theory.Run(context.Background(), theory.SmokeConfig(), dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range sum.Checks {
		fmt.Println(c.Name, c.Verdict)
	}
	fmt.Println(sum.Files)
	// Output:
	// mixing PASS
	// concentration PASS
	// farmass PASS
	// incoherence PASS
	// path PASS
	// [concentration_tails.png farmass.png incoherence.png mixing_contexts.png mixing_opnorm.png theory.json theory.md]
}
