package e2e_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// pdfObjects writes a PDF file of the numbered objects objs (object i+1 is
// objs[i], without its "obj" wrapper) with a correct cross-reference table,
// so that a reader goes through the front door rather than repairing.
func pdfObjects(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// flate compresses data with zlib, as a PDF FlateDecode stream holds it.
func flate(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// onePage is a PDF of one page whose content stream (Flate) is content.
func onePage(content []byte) []byte {
	return pdfObjects(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R"+
			" /Resources << /Font << /F1 5 0 R >> >> >>",
		stream("/Filter /FlateDecode", flate(content)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
}

// hostilePDFs are small files that each once took the service down: memory
// past 2.5 GB, or a reader that never returned.
func hostilePDFs() map[string][]byte {
	var tj bytes.Buffer
	tj.WriteString("BT /F1 9 Tf 10 800 Td\n")
	for range 2_000_000 {
		tj.WriteString("(a) Tj\n")
	}
	tj.WriteString("ET\n")
	// 200 MiB of zeros, deflated twice: a few KiB.
	var zeros bytes.Buffer
	w, _ := zlib.NewWriterLevel(&zeros, zlib.BestCompression)
	chunk := make([]byte, 1<<20)
	for range 200 {
		w.Write(chunk)
	}
	w.Close()
	inner := flate(zeros.Bytes())
	return map[string][]byte{
		"one 8 MiB string": onePage([]byte("BT /F1 9 Tf 10 800 Td (" + strings.Repeat("A", 8<<20) + ") Tj ET")),
		"2 million Tj":     onePage(tj.Bytes()),
		"page tree that is its own kid": pdfObjects(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [2 0 R] /Count 1 >>",
		),
		"page tree cycle of two": pdfObjects(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 2 >>",
			"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 2 >>",
		),
		"embedded file behind two Flate filters": pdfObjects(
			"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(factur-x.xml) 4 0 R] >> >> >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
			"<< /Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /EF << /F 5 0 R >> >>",
			stream("/Type /EmbeddedFile /Subtype /text#2Fxml /Filter [/FlateDecode /FlateDecode]", flate(inner)),
		),
	}
}

// heapPeak samples the live heap of this process, where the test server
// runs, until stop is called, and returns the highest sample.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// TestHostilePDFsFailExtractionAndLeaveTheServerSmall uploads the documents
// that once exhausted the server's memory or looped forever: each bill must
// end with its extraction failed, the server's heap must stay well under
// 300 MB, and another organization's ordinary invoice, uploaded after them,
// must still be read.
func TestHostilePDFsFailExtractionAndLeaveTheServerSmall(t *testing.T) {
	s := apitest.Start(t)
	hostile := newPayer(t, s, "mallory@hostile.test", "")
	honest := newPayer(t, s, "ada@acme.test", "")
	files := hostilePDFs()
	corpus, err := filepath.Glob(filepath.Join(corpusDir, "hostile", "*.pdf"))
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no hostile corpus: %v", err)
	}
	// The reader's own hostile corpus: each file must end its extraction,
	// failed or with what little could be read within the bounds.
	mayRead := map[string]bool{}
	for _, path := range corpus {
		name := filepath.Base(path)
		files[name] = corpusFile(t, filepath.Join("hostile", name))
		mayRead[name] = true
	}
	runtime.GC() // what made the files is not the server's

	stop := heapPeak()
	bills := map[string]api.Bill{}
	for name, data := range files {
		var b api.Bill
		uploadBill(t, s, hostile.web, hostile.org, "file", "invoice.pdf", "application/pdf", data).ExpectStatus(t, 201).Decode(t, &b)
		bills[name] = b
	}
	ordinary := uploadCorpus(t, s, honest.web, honest.org, "facturx-basic-de.pdf")
	if b := extracted(t, s, honest.web, ordinary.Id.String()); b.ExtractionFailedAt != nil || b.BillNumber == nil {
		t.Errorf("the other organization's invoice was not read: %+v", b)
	}
	// One organization's extractions take turns, and each may run into the
	// 30-second deadline of the reader's process: wait long enough for all.
	deadline := time.Now().Add(time.Duration(len(bills)) * 40 * time.Second)
	for name, b := range bills {
		for {
			got := getBill(t, s, hostile.web, b.Id.String())
			if got.Status != "extracting" {
				if got.ExtractionFailedAt == nil && !mayRead[name] {
					t.Errorf("%s: extraction did not fail: %+v", name, got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still extracting", name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if peak := stop(); peak > 300<<20 {
		t.Errorf("server heap peaked at %d MiB while reading hostile PDFs, want under 300 MiB", peak>>20)
	}
}

// TestBillWhoseReadingDiedTwiceIsNotReadAThirdTime sets a bill's extraction
// job as two server processes that died while reading it leave it (running,
// its lease expired, the previous expiry counted), and checks that the next
// server declares the extraction failed instead of reading the file again.
func TestBillWhoseReadingDiedTwiceIsNotReadAThirdTime(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	p := newPayer(t, s, "ada@acme.test", "")
	b := uploadCorpus(t, s, p.web, p.org, "facturx-basic-de.pdf")
	if got := extracted(t, s, p.web, b.Id.String()); got.ExtractionFailedAt != nil {
		t.Fatalf("ordinary invoice: %+v", got)
	}

	d := apitest.OpenDatabase(t, dsn)
	ctx := context.Background()
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE bills SET status = 'extracting', bill_number = NULL, supplier_name = NULL WHERE id = $1`, []any{b.Id}},
		{`UPDATE jobs SET status = 'running', attempts = 2, lease_expiries = 1, locked_until = $1
			WHERE kind = 'bill.extract' AND payload LIKE $2`, []any{past, "%" + b.Id.String() + "%"}},
	} {
		err := d.Tx(ctx, func(tx *db.Tx) error {
			res, err := tx.ExecContext(ctx, q.sql, q.args...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return fmt.Errorf("%s: %d rows", q.sql, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := extracted(t, s, p.web, b.Id.String())
	if got.ExtractionFailedAt == nil || got.BillNumber != nil || got.SupplierName != nil {
		t.Fatalf("after two deaths: %+v, want extraction failed and the file not read", got)
	}
}
