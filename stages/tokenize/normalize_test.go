package tokenize

import (
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	cases := []struct {
		in, want, note string
	}{
		{"plain\ntext", "plain\ntext", ""},
		{"caf\u00e9 \u2014 na\u00efve\r\n", "caf\u00e9 \u2014 na\u00efve\n", "crlf"}, // valid UTF-8 kept
		{"C\xe6sar", "C\u00e6sar", "latin1"},                                         // Latin-1 æ
		{"caf\xe9\r\nlone\rcr", "caf\u00e9\nlone\rcr", "latin1,crlf"},
		{"\ufeffbom kept", "\ufeffbom kept", ""},
	}
	for _, c := range cases {
		got, note := normalize([]byte(c.in))
		if string(got) != c.want || note != c.note {
			t.Errorf("normalize(%q) = %q, %q; want %q, %q", c.in, got, note, c.want, c.note)
		}
	}
}

func TestBinaryReason(t *testing.T) {
	if r := binaryReason([]byte("ordinary text\twith tabs\r\n\fand a form feed")); r != "" {
		t.Errorf("text judged binary: %s", r)
	}
	if r := binaryReason([]byte("abc\x00def")); !strings.Contains(r, "NUL byte at offset 3") {
		t.Errorf("NUL: %q", r)
	}
	ctrl := strings.Repeat("a\x01\x02\x03", 10)
	if r := binaryReason([]byte(ctrl)); !strings.Contains(r, "mostly non-text") {
		t.Errorf("control bytes: %q", r)
	}
	// Latin-1 text is text even though it is not UTF-8.
	if r := binaryReason([]byte("C\xe6sar and caf\xe9")); r != "" {
		t.Errorf("Latin-1 judged binary: %s", r)
	}
}
