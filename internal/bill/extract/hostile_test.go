package extract_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

// Bounds the hostile corpus is held to. The process must stay well under
// 300 MB with a hostile upload in flight; the deadline is generous for a
// loaded two-core machine under -race (the files take milliseconds when
// the reader is bounded, and minutes or forever when it is not).
const (
	hostileHeapPeak = 160 << 20 // live heap objects, sampled during Read
	hostileAllocs   = 1 << 30   // bytes allocated by one Read
	hostileDeadline = 10 * time.Second
)

// hostileOnly runs one file of the corpus, to watch it alone (with a
// memory limit around the process) when the reader regresses.
var hostileOnly = flag.String("hostile.only", "", "run TestHostileDocuments on this file of testdata/hostile only")

// heapSampler records the peak of live heap objects while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.peak.Store(heapObjects())
	go func() {
		defer close(h.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tick.C:
				if v := heapObjects(); v > h.peak.Load() {
					h.peak.Store(v)
				}
			}
		}
	}()
	return h
}

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	<-h.done
	if v := heapObjects(); v > h.peak.Load() {
		h.peak.Store(v)
	}
	return h.peak.Load()
}

// TestHostileDocuments runs every file of testdata/hostile (see the README
// there) through Read under a heap, allocation and time bound. Each must
// fail as unreadable, or give a result read within the bounds.
func TestHostileDocuments(t *testing.T) {
	files, err := filepath.Glob("testdata/hostile/*.*")
	if err != nil || len(files) < 20 {
		t.Fatalf("hostile corpus missing: %v %v", files, err)
	}
	for _, f := range files {
		if filepath.Ext(f) == ".md" {
			continue
		}
		name := filepath.Base(f)
		if *hostileOnly != "" && name != *hostileOnly {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		base := heapObjects()
		allocs := allocatedBytes()
		h := sampleHeap()
		start := time.Now()
		type outcome struct {
			res extract.Result
			err error
		}
		ch := make(chan outcome, 1)
		go func() {
			res, err := extract.Read(data)
			ch <- outcome{res, err}
		}()
		var o outcome
		select {
		case o = <-ch:
		case <-time.After(hostileDeadline):
			peak := h.finish()
			stacks := make([]byte, 1<<20)
			stacks = stacks[:runtime.Stack(stacks, true)]
			// The runaway goroutine cannot be stopped; end the test here.
			t.Fatalf("%s: Read still running after %v (heap peak so far %d MiB); goroutines:\n%s",
				name, hostileDeadline, peak>>20, stacks[:min(len(stacks), 16<<10)])
		}
		took := time.Since(start)
		peak := h.finish()
		allocated := allocatedBytes() - allocs
		t.Logf("%-34s %7.1f ms  heap peak +%6.1f MiB  allocated %7.1f MiB  err=%v", name,
			float64(took.Microseconds())/1000, float64(peak-min(peak, base))/(1<<20), float64(allocated)/(1<<20), o.err)
		if peak > hostileHeapPeak {
			t.Errorf("%s: heap peak %d MiB, bound %d MiB", name, peak>>20, hostileHeapPeak>>20)
		}
		if allocated > hostileAllocs {
			t.Errorf("%s: allocated %d MiB, bound %d MiB", name, allocated>>20, hostileAllocs>>20)
		}
		if o.err != nil && !errors.Is(o.err, extract.ErrUnreadable) {
			t.Errorf("%s: error does not wrap ErrUnreadable: %v", name, o.err)
		}
		if o.err == nil && len(o.res.Fields.InvoiceNumber) > 100 {
			t.Errorf("%s: unbounded field %d bytes", name, len(o.res.Fields.InvoiceNumber))
		}
	}
}

// slowSeed names hostile files that take a tenth of a second or more to
// reach their bound (TestHostileDocuments runs them): as fuzz seeds they
// would spend the few seconds CI gives each target on themselves.
var slowSeed = map[string]bool{
	"content-1m-glyphs.pdf": true, "content-deep-arrays.pdf": true, "xref-prev-cycle.pdf": true,
	"embedded-nested-flate.pdf": true, "tf-many-cmap-font.pdf": true,
}

// FuzzReadPDF mutates PDFs (the corpus and the hostile files) and holds
// Read to its bounds, not only to not panicking: every error wraps
// ErrUnreadable and one Read allocates at most fuzzAllocs bytes. The
// inputs stay small, so the bounds that depend on the file size are small
// too; a reader that loses a bound (builds every glyph, walks a cycle,
// inflates a bomb) allocates far more or never returns.
func FuzzReadPDF(f *testing.F) {
	for _, pattern := range []string{"testdata/*.pdf", "testdata/hostile/*.pdf"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) <= 64<<10 && !slowSeed[filepath.Base(name)] {
				f.Add(data)
			}
		}
	}
	const fuzzAllocs = 512 << 20
	// A generous bound for a small input on a loaded machine: reading one
	// stops at its budgets in milliseconds.
	const fuzzDeadline = 5 * time.Second
	f.Fuzz(func(t *testing.T, data []byte) {
		before := allocatedBytes()
		var (
			res extract.Result
			err error
		)
		done := make(chan struct{})
		go func() { defer close(done); res, err = extract.Read(data) }()
		select {
		case <-done:
		case <-time.After(fuzzDeadline):
			buf := make([]byte, 1<<20)
			t.Fatalf("Read of a %d-byte input still running after %s:\n%s", len(data), fuzzDeadline, buf[:runtime.Stack(buf, true)])
		}
		if allocated := allocatedBytes() - before; allocated > fuzzAllocs {
			t.Fatalf("Read allocated %d MiB of a %d-byte input", allocated>>20, len(data))
		}
		if err != nil {
			if !errors.Is(err, extract.ErrUnreadable) {
				t.Fatalf("error does not wrap ErrUnreadable: %v", err)
			}
			return
		}
		if res.Fields == (extract.Fields{}) {
			t.Fatal("success without a field")
		}
	})
}
