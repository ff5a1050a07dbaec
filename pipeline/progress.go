package pipeline

import (
	"fmt"
	"io"
	"strings"
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
	line := progressLine(p.stage, done, total, el)
	if note != "" {
		line += " " + note
	}
	fmt.Fprintln(p.w, line)
}

// progressLine is a log line a reader takes in at a glance: counts with
// thousands separators, the rate as rateText writes it
// ("tokenize: 35,090/35,090 (100%, 1.75M/s, ETA 0s)").
func progressLine(stage string, done, total int64, elapsed time.Duration) string {
	line := fmt.Sprintf("%s: %s/%s", stage, humanize.Comma(done), humanize.Comma(total))
	if total > 0 && done > 0 && elapsed > 0 {
		rate := float64(done) / elapsed.Seconds()
		eta := time.Duration(float64(total-done) / rate * float64(time.Second))
		line += fmt.Sprintf(" (%.0f%%, %s, ETA %s)", 100*float64(done)/float64(total), rateText(rate), eta.Round(time.Second))
	}
	return line
}

// rateText writes a rate of items per second with an SI prefix and at
// most two decimals ("1.75M/s"), except below one a second, where an SI
// prefix would read as milli ("855.04m/s"): per minute down to one a
// minute ("51.3/min"), then the time each item takes ("3m20s/item").
func rateText(perSec float64) string {
	si := func(v float64) string { return strings.ReplaceAll(humanize.SIWithDigits(v, 2, ""), " ", "") }
	switch {
	case perSec >= 1:
		return si(perSec) + "/s"
	case perSec*60 >= 1:
		return si(perSec*60) + "/min"
	}
	return time.Duration(float64(time.Second)/perSec).Round(time.Second).String() + "/item"
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
