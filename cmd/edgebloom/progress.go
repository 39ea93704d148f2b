package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// isTerminal reports whether w is a character device, such as a terminal.
// It needs no x/term: a terminal is the character device a user watches,
// and a pipe, file or /dev/null test case never redraws anything anyway.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && f.Name() != os.DevNull
}

// A progress reports keys done while a long job runs: a bar redrawn in place
// on a terminal, or one plain line every interval otherwise, so that logs
// of a batch job stay readable.
type progress struct {
	out      io.Writer
	tty      bool
	interval time.Duration
	start    time.Time
	keys     atomic.Uint64
	// label names the command in plain lines; fraction, when not nil,
	// says how much is done (0 to 1, or -1 when unknown), else src does.
	label    string
	fraction func() float64
	src      *lineSource // bytes read and total size, for the ETA

	stop chan struct{}
	wg   sync.WaitGroup
}

// ttyRedraw is how often the terminal bar is redrawn: often enough to look
// alive, rarely enough to cost nothing.
const ttyRedraw = 200 * time.Millisecond

// startProgress starts reporting on out. An interval of 0 reports nothing.
func startProgress(out io.Writer, interval time.Duration, src *lineSource) *progress {
	return startProgressOf(out, "build", interval, src, nil)
}

// startProgressOf starts reporting on out for the command label, with the
// fraction done from fraction (when not nil) or from src's bytes.
func startProgressOf(out io.Writer, label string, interval time.Duration, src *lineSource, fraction func() float64) *progress {
	p := &progress{out: out, tty: isTerminal(out), interval: interval, start: time.Now(), label: label, fraction: fraction, src: src, stop: make(chan struct{})}
	if interval <= 0 {
		return p
	}
	if p.tty {
		interval = min(interval, ttyRedraw)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				if p.tty {
					fmt.Fprint(p.out, "\r\033[K") // the summary replaces the bar
				}
				return
			case <-t.C:
				p.report()
			}
		}
	}()
	return p
}

// done stops reporting and clears the bar.
func (p *progress) done() {
	close(p.stop)
	p.wg.Wait()
}

func (p *progress) report() {
	keys := p.keys.Load()
	elapsed := time.Since(p.start)
	rate := float64(keys) / elapsed.Seconds()
	frac, total := -1.0, int64(-1)
	if p.fraction != nil {
		frac = p.fraction()
	} else if read := p.src.read.Load(); p.src.total > 0 {
		total = p.src.total
		frac = min(1, float64(read)/float64(total))
	}
	eta := ""
	if frac > 0 {
		eta = "ETA " + formatDuration(time.Duration(float64(elapsed)*(1-frac)/frac))
	}
	if p.tty {
		const width = 30
		bar := ""
		if frac >= 0 {
			n := int(frac * width)
			bar = fmt.Sprintf("[%s%s] %3.0f%%  ", strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac)
		}
		fmt.Fprintf(p.out, "\r\033[K%s%s keys  %s keys/s  %s", bar, si(float64(keys)), si(rate), eta)
		return
	}
	line := fmt.Sprintf("edgebloom: %s: %d keys, %s keys/s", p.label, keys, si(rate))
	if frac >= 0 && total > 0 {
		line += fmt.Sprintf(", %.1f%% of %s, %s", 100*frac, bytesIEC(uint64(total)), eta)
	} else if frac >= 0 {
		line += fmt.Sprintf(", %.1f%%, %s", 100*frac, eta)
	}
	fmt.Fprintln(p.out, line)
}

// si formats x with a k, M or G suffix: 1.23M.
func si(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// bytesIEC formats a byte count in binary units: 11.4 MiB.
func bytesIEC(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	x, i := float64(n)/unit, 0
	for ; x >= unit && i < 4; i++ {
		x /= unit
	}
	return fmt.Sprintf("%.1f %ciB", x, "KMGTP"[i])
}

// formatDuration rounds d for a human: 850ms, 12.3s, 4m05s, 1h02m.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
