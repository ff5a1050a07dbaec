package tokenize

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
)

// readXZ reads an xz-compressed tar, the format of OpenWebText's
// urlsf_subset*.xz files (and of openwebtext.tar.xz, whose members are such
// files): every *.txt member is a document, every *.xz member is read the same
// way in turn, other members are ignored.
//
// Decoding runs the xz command: pure-Go xz decodes at ~1.8 MB/s here, ~30x
// slower, and a separate process also moves decoding off the tokenizer cores.
func readXZ(ctx context.Context, f inputFile, sink func(rawDoc) error) error {
	if _, err := exec.LookPath("xz"); err != nil {
		return fmt.Errorf("corpus: %s needs the xz command to decode it; install xz-utils (Debian: apt-get install xz-utils): %w", f.path, err)
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	defer fh.Close()
	cr := &countingReader{r: fh}
	return readXZStream(ctx, cr, f.path, f.name, func() int64 { return cr.n.Load() }, sink)
}

// readXZStream decodes one xz tar stream from in; where names the archive in
// errors and prefix starts its members' document ids.
func readXZStream(ctx context.Context, in io.Reader, where, prefix string, pos func() int64, sink func(rawDoc) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xz", "-dc")
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("corpus: %s: starting xz: %w", where, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("corpus: %s: starting xz: %w", where, err)
	}
	// stop ends xz when reading stops early for a reason of ours; closing the
	// pipe makes a still-writing xz exit.
	stop := func(cause error) error {
		_ = out.Close()
		cancel()
		_ = cmd.Wait()
		return cause
	}
	// decodeFailed prefers xz's own message (corrupt or truncated input) to
	// the tar reader's "unexpected EOF". On a decode error xz has exited;
	// otherwise closing the pipe ends it with a broken-pipe complaint.
	decodeFailed := func(cause error) error {
		_ = out.Close()
		werr := cmd.Wait()
		msg := strings.TrimSpace(stderr.String())
		if werr != nil && msg != "" && !strings.Contains(msg, "Broken pipe") && ctx.Err() == nil {
			return fmt.Errorf("corpus: %s is not a valid xz file (corrupt or truncated?): %s", where, msg)
		}
		return cause
	}
	tr := tar.NewReader(out)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return decodeFailed(fmt.Errorf("corpus: %s: not a valid tar inside the xz stream (OpenWebText urlsf_subset*.xz files are xz-compressed tars): %w", where, err))
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		member := where + "/" + hdr.Name
		id := prefix + "/" + hdr.Name
		switch strings.ToLower(path.Ext(hdr.Name)) {
		case ".txt":
			b, err := io.ReadAll(tr)
			if err != nil {
				return decodeFailed(fmt.Errorf("corpus: %s: %w", member, err))
			}
			if err := sink(rawDoc{id: id, where: member, text: b, file: true, pos: pos()}); err != nil {
				return stop(err)
			}
		case ".xz":
			if err := readXZStream(ctx, tr, member, id, pos, sink); err != nil {
				return stop(err)
			}
		}
	}
	// Drain so that xz sees the whole stream and can report trailing garbage.
	if _, err := io.Copy(io.Discard, out); err != nil {
		return decodeFailed(fmt.Errorf("corpus: %s: %w", where, err))
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("corpus: %s is not a valid xz file (corrupt or truncated?): %s: %w", where, strings.TrimSpace(stderr.String()), err)
	}
	return nil
}
