package webhooksend

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrAddressNotAllowed is wrapped by every refusal of an address: at creation
// (CheckURL) and when an attempt connects (Sender.Send).
var ErrAddressNotAllowed = errors.New("address not allowed")

// AddressError says which address was refused.
type AddressError struct {
	Addr netip.Addr
	Live bool
}

func (e *AddressError) Error() string {
	if e.Live {
		return fmt.Sprintf("%s is not a public address", e.Addr)
	}
	return fmt.Sprintf("%s is not an address webhooks are sent to", e.Addr)
}

func (e *AddressError) Unwrap() error { return ErrAddressNotAllowed }

// Ranges that are not public besides those netip.Addr names itself
// (loopback, private, link-local, multicast, unspecified).
var nonPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // shared address space (carrier-grade NAT)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the limited broadcast address
		"::/96",           // unspecified, loopback and the IPv4-compatible form
		"::ffff:0:0:0/96", // IPv4-translated
		"64:ff9b::/96",    // NAT64: reaches an IPv4 address through a gateway
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard
		"2001::/23",       // IETF protocol assignments (Teredo, benchmarking, ORCHID)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4: embeds an IPv4 address
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing
		"fc00::/7",        // unique local
		"fec0::/10",       // site-local (deprecated)
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// Public reports whether a is an address on the public internet: not
// loopback, private, link-local, shared (CGNAT), multicast, unspecified,
// documentation, benchmarking or reserved, nor an IPv6 form that embeds or
// translates to an IPv4 address (those are judged by the IPv4 address when
// mapped, refused otherwise). An address with a zone is not public.
func Public(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// allowedInTest reports whether the test environment sends to a: anything
// a developer may run a receiver on (loopback, a private network, a
// container's address, the internet), but never link-local addresses (where
// cloud metadata services answer), multicast or unspecified ones.
func allowedInTest(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	return !a.IsUnspecified() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() &&
		!a.IsInterfaceLocalMulticast() && !a.IsMulticast() &&
		!thisNetwork.Contains(a) && !reserved4.Contains(a)
}

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	reserved4   = netip.MustParsePrefix("240.0.0.0/4")
)

// allowed is the address policy of an environment.
func allowed(live bool, a netip.Addr) error {
	ok := allowedInTest(a)
	if live {
		ok = Public(a)
	}
	if !ok {
		return &AddressError{Addr: a, Live: live}
	}
	return nil
}

// control is the net.Dialer Control hook: it runs after the address is
// chosen and before the connection is made, so a host name that resolved to
// a public address at creation but to an inside one now (DNS rebinding) is
// refused here.
func control(live bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if network != "tcp4" && network != "tcp6" {
			return fmt.Errorf("webhooksend: network %s: %w", network, ErrAddressNotAllowed)
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("webhooksend: address %q: %w", address, ErrAddressNotAllowed)
		}
		return allowed(live, ap.Addr())
	}
}
