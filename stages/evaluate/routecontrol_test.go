package evaluate

import (
	"testing"

	"routebench/stages/tokenize"
)

// TestRepeatedIDsNameTheTokenizers: the control's ids are keyed by the
// tokenizers' own names, and an unknown tokenizer is refused by name.
func TestRepeatedIDsNameTheTokenizers(t *testing.T) {
	for _, tok := range []string{tokenize.TokenizerBytes, tokenize.TokenizerGPT2} {
		if _, err := repeatedToken(tok); err != nil {
			t.Errorf("tokenizer %s: %v", tok, err)
		}
	}
	if id, _ := repeatedToken(tokenize.TokenizerBytes); id != 0x20 {
		t.Errorf("the byte tokenizer's id for 0x20 is %d, want 32", id)
	}
	if len(repeatedIDs) != 2 {
		t.Errorf("repeatedIDs names %d tokenizers, tokenize knows 2", len(repeatedIDs))
	}
	if _, err := repeatedToken("sentencepiece"); err == nil {
		t.Error("an unknown tokenizer was given an id")
	}
}
