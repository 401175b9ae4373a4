package isolated_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/bill/extract"
	"github.com/strongroom/strongroom/internal/bill/extract/isolated"
)

func TestChildReadsWhatTheReaderReads(t *testing.T) {
	for _, name := range []string{"facturx-basic-de.pdf", "text-de-rechnung.pdf", "ubl-be-invoice.xml"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("../testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := extract.Read(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := isolated.Read(context.Background(), data, isolated.Limits{})
			if err != nil {
				t.Fatalf("isolated.Read: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("child read\n%+v\nin-process read\n%+v", got, want)
			}
		})
	}
}

func TestChildReportsAnUnreadableDocument(t *testing.T) {
	_, err := isolated.Read(context.Background(), []byte("not an invoice at all"), isolated.Limits{})
	if !errors.Is(err, extract.ErrUnreadable) || errors.Is(err, isolated.ErrLimit) {
		t.Fatalf("err = %v, want ErrUnreadable without ErrLimit", err)
	}
}

func TestChildOverItsMemoryLimitIsEnded(t *testing.T) {
	// Holding 12 MiB of input alone is over an 8 MiB limit.
	data := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{' '}, 12<<20)...)
	_, err := isolated.Read(context.Background(), data, isolated.Limits{Memory: 8 << 20})
	if !errors.Is(err, isolated.ErrLimit) || !errors.Is(err, extract.ErrUnreadable) || !strings.Contains(err.Error(), "needed more than 8 MiB") {
		t.Fatalf("err = %v, want ErrLimit and ErrUnreadable", err)
	}
}

func TestChildPastItsDeadlineIsKilled(t *testing.T) {
	data, err := os.ReadFile("../testdata/facturx-basic-de.pdf")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = isolated.Read(context.Background(), data, isolated.Limits{Deadline: time.Millisecond})
	if !errors.Is(err, isolated.ErrLimit) || !errors.Is(err, extract.ErrUnreadable) || !strings.Contains(err.Error(), "took longer") {
		t.Fatalf("err = %v, want ErrLimit and ErrUnreadable", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("Read returned after %s: the deadline did not end the child", waited)
	}
}

func TestCallerGivingUpIsNotTheDocumentsFault(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := isolated.Read(ctx, []byte("%PDF-1.7"), isolated.Limits{})
	if err == nil || errors.Is(err, extract.ErrUnreadable) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
}
