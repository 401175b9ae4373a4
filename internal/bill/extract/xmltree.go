package extract

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"golang.org/x/text/encoding/ianaindex"
)

// Limits on XML input. An e-invoice nests about 8 levels deep and has a few
// thousand elements even with hundreds of lines; the limits are far above
// that and far below what would hurt the job runner.
const (
	maxXMLDepth = 64
	maxXMLNodes = 200_000
	maxXMLText  = 1 << 20 // characters kept of one element's text
)

// node is one element of a parsed XML document, named by namespace URI and
// local name: prefixes are resolved by encoding/xml and then forgotten, so
// <cbc:ID>, <ID xmlns="…CommonBasicComponents-2"> and <x:ID> are the same
// element.
type node struct {
	space, local string
	attrs        []xml.Attr
	text         string
	children     []*node
}

// parseXML builds a tree of b. It refuses DTDs (a real invoice has none, and
// refusing them closes entity-expansion attacks outright even though
// encoding/xml does not expand custom entities), and stops at maxXMLDepth and
// maxXMLNodes.
func parseXML(b []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	d.CharsetReader = charsetReader
	var (
		root  *node
		stack []*node
		count int
		text  strings.Builder
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, errors.New("XML with a DTD is not accepted")
		case xml.StartElement:
			count++
			if count > maxXMLNodes {
				return nil, errors.New("too many XML elements")
			}
			if len(stack) >= maxXMLDepth {
				return nil, errors.New("XML nested too deeply")
			}
			n := &node{space: t.Name.Space, local: t.Name.Local, attrs: t.Attr}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("more than one root element")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
			text.Reset()
		case xml.CharData:
			// Only leaf text matters for invoices; text between child
			// elements is indentation. Keep the latest run per element.
			if len(stack) > 0 && text.Len() < maxXMLText {
				text.Write(t[:min(len(t), maxXMLText-text.Len())])
			}
		case xml.EndElement:
			n := stack[len(stack)-1]
			if len(n.children) == 0 {
				n.text = strings.TrimSpace(text.String())
			}
			text.Reset()
			stack = stack[:len(stack)-1]
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// charsetReader lets documents declared as ISO-8859-1 or windows-1252 (both
// occur in German and French e-invoices) be read; encoding/xml alone accepts
// only "UTF-8" spelt exactly so (in any letter case). A declaration that names
// UTF-8 in another spelling ("UTF-8-W/O-BOM", "utf8", "UTF_8") is read as
// UTF-8, which is what its bytes are; any other label the IANA registry does
// not know is refused.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	if namesUTF8(label) {
		return input, nil
	}
	enc, err := ianaindex.IANA.Encoding(label)
	if err != nil || enc == nil {
		return nil, errors.New("unsupported XML encoding " + truncate(label, 40))
	}
	return enc.NewDecoder().Reader(input), nil
}

// namesUTF8 reports whether an encoding label names UTF-8: ignoring letter
// case and punctuation it is "utf8", possibly followed by a qualifier that
// starts with a letter ("UTF-8-W/O-BOM", "utf-8 (no BOM)"), never by a digit
// ("UTF-80" is not UTF-8).
func namesUTF8(label string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(label) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
		if b.Len() > 16 {
			break
		}
	}
	rest, ok := strings.CutPrefix(b.String(), "utf8")
	return ok && (rest == "" || rest[0] >= 'a' && rest[0] <= 'z')
}

// name is a namespace URI and local name.
type name struct{ space, local string }

// child returns the first child named n, or nil.
func (e *node) child(n name) *node {
	if e == nil {
		return nil
	}
	for _, c := range e.children {
		if c.local == n.local && c.space == n.space {
			return c
		}
	}
	return nil
}

// all returns every child named n.
func (e *node) all(n name) []*node {
	if e == nil {
		return nil
	}
	var out []*node
	for _, c := range e.children {
		if c.local == n.local && c.space == n.space {
			out = append(out, c)
		}
	}
	return out
}

// path follows first children along names; nil when a step is missing.
func (e *node) path(names ...name) *node {
	for _, n := range names {
		e = e.child(n)
	}
	return e
}

// value is the trimmed text of e, "" for nil.
func (e *node) value() string {
	if e == nil {
		return ""
	}
	return e.text
}

// attr returns the value of the attribute with the local name (attributes of
// invoices are unqualified: currencyID, schemeID, format).
func (e *node) attr(local string) string {
	if e == nil {
		return ""
	}
	for _, a := range e.attrs {
		if a.Name.Local == local {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// readXML parses an XML invoice and dispatches on the root element.
func readXML(b []byte) (Result, error) {
	root, err := parseXML(b)
	if err != nil {
		return Result{}, unreadable("XML: %v", err)
	}
	return readInvoiceTree(root)
}

func readInvoiceTree(root *node) (Result, error) {
	switch {
	case root.space == nsUBLInvoice && root.local == "Invoice":
		return readUBL(root, false), nil
	case root.space == nsUBLCreditNote && root.local == "CreditNote":
		return readUBL(root, true), nil
	case root.space == nsRSM && root.local == "CrossIndustryInvoice":
		return readCII(root, ciiD16B), nil
	case root.space == nsZF1 && root.local == "CrossIndustryDocument":
		return readCII(root, zugferd1), nil
	case strings.HasPrefix(root.space, "urn:ferd:CrossIndustryDocument"):
		return Result{}, unreadable("ZUGFeRD XML of namespace %s is not supported", truncate(root.space, 80))
	}
	return Result{}, unreadable("XML root {%s}%s is not a UBL or CII invoice", root.space, root.local)
}
