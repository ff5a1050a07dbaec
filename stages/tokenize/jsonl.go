package tokenize

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// readJSONL reads one document per non-blank line from the string field
// "text". A line that is not a JSON object with a string "text" fails the run:
// silently skipping it would change the corpus without anyone noticing.
func readJSONL(ctx context.Context, f inputFile, sink func(rawDoc) error) error {
	fh, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	defer fh.Close()
	cr := &countingReader{r: fh}
	br := bufio.NewReaderSize(cr, 1<<20)
	for line := 1; ; line++ {
		if line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("corpus: %s:%d: %w", f.path, line, err)
		}
		if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 {
			text, perr := jsonlText(trimmed)
			if perr != nil {
				return fmt.Errorf("corpus: %s:%d: %w", f.path, line, perr)
			}
			pos := cr.n.Load() - int64(br.Buffered())
			if serr := sink(rawDoc{id: fmt.Sprintf("%s#%d", f.name, line), where: fmt.Sprintf("%s:%d", f.path, line), text: []byte(text), pos: pos}); serr != nil {
				return serr
			}
		}
		if err != nil { // io.EOF after the last line
			return nil
		}
	}
}

func jsonlText(line []byte) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return "", fmt.Errorf("not a JSON object (corrupt line?): %w", err)
	}
	raw, ok := obj["text"]
	if !ok {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("no \"text\" field (fields: %s)", strings.Join(keys, ", "))
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return "", fmt.Errorf("field \"text\" is not a string: %w", err)
	}
	return text, nil
}
