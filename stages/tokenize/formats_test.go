package tokenize

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"routebench/stages/tokenize/shards"
)

// writeParquet writes a Parquet file with string columns, Hugging Face style.
func writeParquet(t testing.TB, path string, cols map[string][]string, order []string) {
	t.Helper()
	var fields []arrow.Field
	var arrays []arrow.Array
	for _, name := range order {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true})
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for _, v := range cols[name] {
			b.Append(v)
		}
		arrays = append(arrays, b.NewArray())
		b.Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrays, int64(arrays[0].Len()))
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // closes f
		t.Fatal(err)
	}
}

// tarOf returns a tar holding the given members in order.
func tarOf(t testing.TB, members [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		if err := tw.WriteHeader(&tar.Header{Name: m[0], Mode: 0o644, Size: int64(len(m[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// xzOf compresses b with the xz command, or skips the test.
func xzOf(t testing.TB, b []byte) []byte {
	t.Helper()
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz command not installed")
	}
	cmd := exec.Command("xz", "-c", "-0")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// streamText decodes a bytes-tokenizer stream, writing EOT as "|".
func streamText(t testing.TB, paths []string, split string) string {
	t.Helper()
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tk, err := d.Tokens(split)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := int64(0); i < tk.Len(); i++ {
		if v := tk.At(i); v == 256 {
			b.WriteString("|")
		} else {
			b.WriteByte(byte(v))
		}
	}
	return b.String()
}

func TestUserFormats(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"data/a.jsonl":  `{"text": "json one", "url": "u"}` + "\n\n" + `{"text":"json\r\ntwo"}` + "\n",
		"data/held.txt": strings.Repeat("held out text. ", 3),
	})
	writeParquet(t, filepath.Join(dir, "data", "b.parquet"),
		map[string][]string{"text": {"pq one", "pq two"}, "url": {"x", "y"}}, []string{"url", "text"})
	cfg := testConfig(TokenizerBytes, filepath.Join(dir, "data"))
	cfg.HeldOut, cfg.ShardTokens = []string{"held.txt"}, 1000
	_, paths := runOK(t, cfg)
	if got := streamText(t, paths, shards.SplitTrain); got != "json one|json\ntwo|pq one|pq two|" {
		t.Errorf("train stream %q", got)
	}
	d, _ := shards.Open(paths)
	defer d.Close()
	docs, _ := d.Documents(shards.SplitTrain)
	var ids []string
	for _, doc := range docs {
		ids = append(ids, doc.ID)
	}
	if strings.Join(ids, " ") != "data/a.jsonl#1 data/a.jsonl#3 data/b.parquet#0 data/b.parquet#1" {
		t.Errorf("document ids %v", ids)
	}
}

func TestXZArchives(t *testing.T) {
	dir := t.TempDir()
	inner := xzOf(t, tarOf(t, [][2]string{
		{"openwebtext/0001-a.txt", "web page one"},
		{"openwebtext/0002-b.txt", "web page two\r\n"},
		{"openwebtext/README", "not a document"},
	}))
	if err := os.WriteFile(filepath.Join(dir, "urlsf_subset00-1_data.xz"), inner, 0o644); err != nil {
		t.Fatal(err)
	}
	// openwebtext.tar.xz holds urlsf_subset*.xz files: read nested.
	outer := xzOf(t, tarOf(t, [][2]string{{"openwebtext/urlsf_subset00-2_data.xz", string(inner)}}))
	if err := os.WriteFile(filepath.Join(dir, "openwebtext.tar.xz"), outer, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(TokenizerBytes, filepath.Join(dir, "urlsf_subset00-1_data.xz"), filepath.Join(dir, "openwebtext.tar.xz"))
	cfg.HeldOut, cfg.ShardTokens = []string{"openwebtext.tar.xz"}, 16
	_, paths := runOK(t, cfg)
	if got := streamText(t, paths, shards.SplitTrain); got != "web page one|web page two\n|" {
		t.Errorf("train stream %q", got)
	}
	if got := streamText(t, paths, shards.SplitHeldOut); got != "web page one|web page two\n|" {
		t.Errorf("held-out stream %q", got)
	}
	d, _ := shards.Open(paths)
	defer d.Close()
	docs, _ := d.Documents(shards.SplitHeldOut)
	if len(docs) != 2 || docs[1].ID != "openwebtext.tar.xz/openwebtext/urlsf_subset00-2_data.xz/openwebtext/0002-b.txt" || docs[1].Norm != "crlf" {
		t.Errorf("held-out documents %+v", docs)
	}
}

func TestBadInputFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"bad.jsonl":       `{"text": "fine"}` + "\n" + `{"text": "broken` + "\n",
		"notext.jsonl":    `{"body": "x", "url": "y"}` + "\n",
		"corrupt.parquet": "PAR1 this is not parquet at all PAR1",
		"corrupt.xz":      "\xfd7zXZ\x00 truncated garbage",
		"ok.txt":          strings.Repeat("ok ", 40),
	})
	writeParquet(t, filepath.Join(dir, "body.parquet"), map[string][]string{"body": {"a"}, "url": {"b"}}, []string{"body", "url"})
	// A Parquet file damaged in its data pages (footer intact).
	var rows []string
	for i := range 2000 {
		rows = append(rows, fmt.Sprintf("row %d with some words %d", i, i*7919))
	}
	writeParquet(t, filepath.Join(dir, "damaged.parquet"), map[string][]string{"text": rows}, []string{"text"})
	b, err := os.ReadFile(filepath.Join(dir, "damaged.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for k := len(b) / 2; k < len(b)/2+40; k++ {
		b[k] ^= 0x5a
	}
	writeFiles(t, dir, map[string]string{"damaged.parquet": string(b)})
	cases := []struct {
		file string
		want []string
	}{
		{"bad.jsonl", []string{"bad.jsonl:2", "not a JSON object"}},
		{"notext.jsonl", []string{"notext.jsonl:1", `no "text" field (fields: body, url)`}},
		{"body.parquet", []string{"body.parquet", `has no column "text" (columns: body, url)`}},
		{"corrupt.parquet", []string{"corrupt.parquet", "not a readable Parquet file"}},
		{"damaged.parquet", []string{"damaged.parquet: reading rows from", "corrupt file?"}},
	}
	if _, err := exec.LookPath("xz"); err == nil {
		cases = append(cases, struct {
			file string
			want []string
		}{"corrupt.xz", []string{"corrupt.xz", "not a valid xz file"}})
	}
	for _, c := range cases {
		cfg := testConfig(TokenizerBytes, filepath.Join(dir, "ok.txt"), filepath.Join(dir, c.file))
		cfg.HeldOut = []string{"ok.txt"}
		out := filepath.Join(t.TempDir(), "out")
		err := Run(context.Background(), cfg, out, nil)
		if err == nil {
			t.Errorf("%s: Run succeeded", c.file)
			continue
		}
		t.Logf("%s: %v", c.file, err)
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.file, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", c.file, err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("%s: output left behind: %v", c.file, ents)
		}
	}
}
