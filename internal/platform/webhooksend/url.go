package webhooksend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLength is the longest endpoint URL accepted, in bytes.
const MaxURLLength = 2048

// URLError is a URL refused by CheckURL. Its message is display-grade: it
// says what is wrong (for the field "url" of the request) and never repeats
// an internal address the host resolved to.
type URLError struct {
	Reason string
	Err    error // the cause, for errors.Is (ErrAddressNotAllowed, a resolver error); may be nil
}

func (e *URLError) Error() string { return e.Reason }
func (e *URLError) Unwrap() error { return e.Err }

func urlErr(format string, args ...any) error {
	return &URLError{Reason: fmt.Sprintf(format, args...)}
}

// ParseURL checks the form of an endpoint URL, without looking its host up:
// at most MaxURLLength bytes of printable ASCII with no spaces, absolute,
// http or https (https only when live), a host that is an IP address or a
// domain name, a port from 1 to 65535 if any, no user info and no fragment.
func ParseURL(raw string, live bool) (*url.URL, error) {
	if raw == "" {
		return nil, urlErr("must not be empty")
	}
	if len(raw) > MaxURLLength {
		return nil, urlErr("must be at most %d characters", MaxURLLength)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c >= 0x7f {
			return nil, urlErr("must contain only printable ASCII characters without spaces (percent-encode the others)")
		}
	}
	if strings.Contains(raw, "#") {
		return nil, urlErr("must not have a fragment (#…)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, urlErr("must be a valid absolute URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if live {
			return nil, urlErr("must use https")
		}
	case "":
		return nil, urlErr("must be an absolute URL starting with https://")
	default:
		return nil, urlErr("must use https or http, not %s", u.Scheme)
	}
	if u.Opaque != "" || !strings.HasPrefix(raw[len(u.Scheme):], "://") {
		return nil, urlErr("must be an absolute URL starting with %s://", u.Scheme)
	}
	if u.User != nil {
		return nil, urlErr("must not contain a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return nil, urlErr("must name a host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, urlErr("must have a port from 1 to 65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, urlErr("must have a port from 1 to 65535")
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return nil, urlErr("must have a valid IPv6 address between brackets, without a zone")
		}
		return u, nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return u, nil
	}
	if err := checkDomain(host); err != nil {
		return nil, err
	}
	return u, nil
}

// checkDomain accepts a DNS name: labels of letters, digits, hyphens and
// underscores, 1 to 63 bytes, not starting or ending with a hyphen, at most
// 253 bytes in all (a final dot allowed), and a last label that is not all
// digits or hexadecimal-looking, since resolvers read "2130706433" or
// "0x7f.1" as IPv4 addresses.
func checkDomain(host string) error {
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > 253 {
		return urlErr("must have a valid host name")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return urlErr("must have a valid host name")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return urlErr("must have a valid host name (a non-ASCII name is written in its xn-- form)")
			}
		}
	}
	last := strings.ToLower(labels[len(labels)-1])
	allDigits := true
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			allDigits = false
			break
		}
	}
	if allDigits || strings.HasPrefix(last, "0x") {
		return urlErr("must have a valid host name or IP address")
	}
	return nil
}

// CheckURL checks an endpoint URL when it is created or changed: ParseURL,
// then in live every address the host resolves to must be public (an IP
// address host is judged as it is). In test no address is looked up: a
// developer's machine and its local names are fine. The connection of every
// attempt is checked again by Send, whatever the host resolves to then.
func CheckURL(ctx context.Context, raw string, live bool, r Resolver) (*url.URL, error) {
	u, err := ParseURL(raw, live)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if err := allowed(live, a); err != nil {
			return nil, &URLError{Reason: "must not point to " + describe(a, live), Err: err}
		}
		return u, nil
	}
	if !live {
		return u, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound || err == nil {
			return nil, &URLError{Reason: "host " + host + " has no address", Err: err}
		}
		return nil, &URLError{Reason: "host " + host + " could not be looked up; try again", Err: err}
	}
	for _, a := range addrs {
		if err := allowed(live, a); err != nil {
			return nil, &URLError{Reason: "host " + host + " resolves to an address that is not public", Err: err}
		}
	}
	return u, nil
}

// describe names the kind of a refused address for a message.
func describe(a netip.Addr, live bool) string {
	if live {
		return "an address that is not public (" + a.String() + ")"
	}
	return "a link-local, multicast or unspecified address (" + a.String() + ")"
}
