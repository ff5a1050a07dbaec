package pipeline

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
)

// progress shows a long stage's advance: a bar with rate and ETA on a
// terminal, and a plain line at most every logEvery elsewhere (CI logs).
type progress struct {
	mu          sync.Mutex
	stage       string
	interactive bool
	w           io.Writer
	bar         *progressbar.ProgressBar
	total       int64
	start       time.Time
	lastLog     time.Time
	last        int64
}

const logEvery = 15 * time.Second

func newProgress(stage string, interactive bool, w io.Writer) *progress {
	return &progress{stage: stage, interactive: interactive, w: w, start: time.Now()}
}

func (p *progress) update(done, total int64, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = done
	if p.interactive {
		if p.bar == nil || total != p.total {
			p.total = total
			p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.stage), progressbar.OptionShowCount(),
				progressbar.OptionShowIts(), progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		p.bar.Describe(p.stage + " " + note)
		p.bar.Set64(done)
		return
	}
	now := time.Now()
	if now.Sub(p.lastLog) < logEvery && done != total {
		return
	}
	p.lastLog = now
	el := now.Sub(p.start)
	line := fmt.Sprintf("%s: %d/%d", p.stage, done, total)
	if total > 0 && done > 0 {
		rate := float64(done) / el.Seconds()
		eta := time.Duration(float64(total-done) / rate * float64(time.Second))
		line += fmt.Sprintf(" (%.0f%%, %s/s, ETA %s)", 100*float64(done)/float64(total), humanize.FtoaWithDigits(rate, 2), eta.Round(time.Second))
	}
	if note != "" {
		line += " " + note
	}
	fmt.Fprintln(p.w, line)
}

// pause clears a bar before a log line is printed.
func (p *progress) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
