package statement

import (
	"bufio"
	"encoding/xml"
)

// xmlWriter writes XML elements straight to a buffered writer: element
// names are the package's own, text is escaped (encoding/xml.EscapeText:
// markup characters as entities, characters XML cannot hold as U+FFFD).
// Write errors stick in the bufio.Writer and are reported by err.
type xmlWriter struct{ w *bufio.Writer }

func (x xmlWriter) open(name string) {
	_ = x.w.WriteByte('<')
	_, _ = x.w.WriteString(name)
	_ = x.w.WriteByte('>')
}

func (x xmlWriter) close(name string) {
	_, _ = x.w.WriteString("</")
	_, _ = x.w.WriteString(name)
	_ = x.w.WriteByte('>')
}

// text writes <name>value</name>.
func (x xmlWriter) text(name, value string) {
	x.open(name)
	_ = xml.EscapeText(x.w, []byte(value))
	x.close(name)
}

// raw writes markup the caller built from fixed names and values that need
// no escaping (codes, amounts, currency codes).
func (x xmlWriter) raw(s string) { _, _ = x.w.WriteString(s) }

// err is the first write error, if any.
func (x xmlWriter) err() error {
	_, err := x.w.Write(nil)
	return err
}
