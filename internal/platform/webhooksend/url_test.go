package webhooksend

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
		test   bool // sent to in the test environment
	}{
		{"8.8.8.8", true, true},
		{"1.1.1.1", true, true},
		{"93.184.216.34", true, true},
		{"2606:4700:4700::1111", true, true},
		{"2a00:1450:4001:81b::200e", true, true},
		{"::ffff:8.8.8.8", true, true},

		{"127.0.0.1", false, true},
		{"127.255.255.254", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"10.0.0.1", false, true},
		{"172.16.0.1", false, true},
		{"172.31.255.255", false, true},
		{"192.168.1.1", false, true},
		{"::ffff:10.0.0.1", false, true},
		{"::ffff:192.168.0.1", false, true},
		{"fc00::1", false, true},
		{"fd12:3456::1", false, true},
		{"100.64.0.1", false, true},
		{"100.127.255.255", false, true},
		{"192.0.2.1", false, true},
		{"198.51.100.7", false, true},
		{"203.0.113.9", false, true},
		{"198.18.0.1", false, true},
		{"2001:db8::1", false, true},
		{"192.0.0.8", false, true},
		{"64:ff9b::7f00:1", false, true},
		{"2002:7f00:1::", false, true},
		{"2001::1", false, true},
		{"::127.0.0.1", false, true},
		{"fec0::1", false, true},

		{"169.254.169.254", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"::", false, false},
		{"::ffff:0.0.0.0", false, false},
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"ff02::1", false, false},
		{"ff0e::1", false, false},
		{"255.255.255.255", false, false},
		{"240.0.0.1", false, false},
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := Public(a); got != tc.public {
			t.Errorf("Public(%s) = %v, want %v", a, got, tc.public)
		}
		if got := allowedInTest(a); got != tc.test {
			t.Errorf("allowedInTest(%s) = %v, want %v", a, got, tc.test)
		}
		// The Control hook judges the address the dialer is about to connect to.
		for _, live := range []bool{true, false} {
			want := tc.test
			if live {
				want = tc.public
			}
			network := "tcp4"
			if a.Is6() {
				network = "tcp6"
			}
			err := control(live)(network, netip.AddrPortFrom(a, 443).String(), nil)
			if (err == nil) != want {
				t.Errorf("control(live=%v)(%s) = %v, want allowed %v", live, a, err, want)
			}
			if err != nil && !errors.Is(err, ErrAddressNotAllowed) {
				t.Errorf("control(%s) = %v, not ErrAddressNotAllowed", a, err)
			}
		}
	}
	if Public(netip.Addr{}) || Public(netip.MustParseAddr("fe80::1%eth0")) {
		t.Error("the invalid address or a zoned one is public")
	}
	if err := control(true)("udp4", "8.8.8.8:53", nil); !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("control allows udp: %v", err)
	}
	if err := control(false)("tcp4", "not an address", nil); !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("control allows an address it cannot read: %v", err)
	}
}

// resolver is the stub the URL tests look names up with: no test reaches a
// real DNS server.
var resolver = HostMap{
	"hooks.example.com":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:2800:220:1::1")},
	"loopback.example.com": {netip.MustParseAddr("127.0.0.1")},
	"mixed.example.com":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")},
	"mapped.example.com":   {netip.MustParseAddr("::ffff:127.0.0.1")},
	"metadata.example.com": {netip.MustParseAddr("169.254.169.254")},
	"v6local.example.com":  {netip.MustParseAddr("::1")},
	"localhost":            {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
}

func TestCheckURL(t *testing.T) {
	long := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))
	for _, tc := range []struct {
		url        string
		live, test bool // accepted in live, in test
	}{
		{"https://hooks.example.com/strongroom", true, true},
		{"https://hooks.example.com:8443/a/b?c=d&e=f", true, true},
		{"https://hooks.example.com.", true, true},
		{"HTTPS://hooks.example.com/x", true, true},
		{"https://93.184.216.34/hook", true, true},
		{"https://[2606:2800:220:1::1]/hook", true, true},
		{long, true, true},
		{long + "a", false, false},

		{"http://hooks.example.com/", false, true},
		{"http://127.0.0.1", false, true},
		{"http://127.0.0.1:8080/hook", false, true},
		{"https://127.0.0.1/hook", false, true},
		{"http://10.0.0.1", false, true},
		{"https://10.0.0.1", false, true},
		{"http://[::1]", false, true},
		{"https://[::1]:9000/hook", false, true},
		{"http://[::ffff:127.0.0.1]", false, true},
		{"https://[::ffff:127.0.0.1]/", false, true},
		{"https://[::ffff:7f00:1]/", false, true},
		{"http://localhost:3000/hook", false, true},
		{"https://localhost/hook", false, true},
		{"https://loopback.example.com/hook", false, true},
		{"https://mixed.example.com/hook", false, true},
		{"https://mapped.example.com/hook", false, true},
		{"https://v6local.example.com/hook", false, true},
		{"https://metadata.example.com/", false, true}, // test does not look names up
		{"https://100.64.0.1/", false, true},
		{"https://unknown.example.com/", false, true},

		{"https://169.254.169.254/latest/meta-data", false, false},
		{"http://[fe80::1]/", false, false},
		{"http://0.0.0.0:8080/", false, false},
		{"https://[::]/", false, false},
		{"https://224.0.0.1/", false, false},

		{"", false, false},
		{"hooks.example.com/hook", false, false},
		{"//hooks.example.com/hook", false, false},
		{"/hook", false, false},
		{"ftp://hooks.example.com/", false, false},
		{"javascript:alert(1)", false, false},
		{"https:hooks.example.com", false, false},
		{"https:/hooks.example.com", false, false},
		{"https://", false, false},
		{"https:///path", false, false},
		{"https://user:pass@hooks.example.com/", false, false},
		{"https://user@hooks.example.com/", false, false},
		{"https://@hooks.example.com/", false, false},
		{"https://hooks.example.com/#frag", false, false},
		{"https://hooks.example.com/#", false, false},
		{"https://hooks.example.com/a b", false, false},
		{"https://hooks.example.com/\x00", false, false},
		{"https://hooks.example.com/\n", false, false},
		{"https://hooks.exämple.com/", false, false},
		{"https://hooks.example.com:0/", false, false},
		{"https://hooks.example.com:65536/", false, false},
		{"https://hooks.example.com:/", false, false},
		{"https://hooks.example.com:https/", false, false},
		{"https://hooks..example.com/", false, false},
		{"https://-hooks.example.com/", false, false},
		{"https://hooks.example.com-/", false, false},
		{"https://hooks!.example.com/", false, false},
		{"https://" + strings.Repeat("a", 64) + ".example.com/", false, false},
		{"http://2130706433/", false, false},
		{"http://0x7f.1/", false, false},
		{"http://127.1/", false, false},
		{"http://017700000001/", false, false},
		{"https://[fe80::1%25eth0]/", false, false},
		{"https://[127.0.0.1]/", false, false},
		{"https://[::1/", false, false},
	} {
		for _, live := range []bool{true, false} {
			want := tc.test
			if live {
				want = tc.live
			}
			u, err := CheckURL(context.Background(), tc.url, live, resolver)
			if (err == nil) != want {
				t.Errorf("CheckURL(%q, live=%v) = %v, want accepted %v", tc.url, live, err, want)
				continue
			}
			if err != nil {
				var ue *URLError
				if !errors.As(err, &ue) || ue.Reason == "" {
					t.Errorf("CheckURL(%q) = %#v, want a *URLError with a reason", tc.url, err)
				}
			} else if u == nil || u.Hostname() == "" {
				t.Errorf("CheckURL(%q) accepted without a host", tc.url)
			}
		}
	}
}

func TestCheckURLSaysWhy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ url, want string }{
		{"http://hooks.example.com/", "https"},
		{"https://loopback.example.com/", "not public"},
		{"https://10.0.0.1/", "not public"},
		{"https://unknown.example.com/", "no address"},
		{"https://a:b@hooks.example.com/", "user name"},
		{"https://hooks.example.com/#x", "fragment"},
	} {
		_, err := CheckURL(ctx, tc.url, true, resolver)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckURL(%q) = %v, want a message with %q", tc.url, err, tc.want)
		}
	}
	_, err := CheckURL(ctx, "https://loopback.example.com/", true, resolver)
	if !errors.Is(err, ErrAddressNotAllowed) || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("a name resolving to loopback: %v; want ErrAddressNotAllowed without the address", err)
	}
	failing := resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
		return nil, errors.New("server misbehaving")
	})
	if _, err := CheckURL(ctx, "https://hooks.example.com/", true, failing); err == nil || !strings.Contains(err.Error(), "try again") {
		t.Errorf("a failed look-up: %v", err)
	}
}

type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/strongroom", "http://127.0.0.1:8080/hook", "http://[::ffff:127.0.0.1]",
		"https://user@hooks.example.com/", "https://hooks.example.com/#x", "http://0x7f.1/", "https://[fe80::1%25eth0]/",
		"https://loopback.example.com/", "https://hooks.example.com:65536/", "HTTPS://HOOKS.EXAMPLE.COM./?q",
	} {
		f.Add(s)
	}
	// Every name resolves: to a public address, or to loopback when it says so.
	stub := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if strings.Contains(host, "loop") {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	})
	f.Fuzz(func(t *testing.T, raw string) {
		ctx := context.Background()
		uLive, errLive := CheckURL(ctx, raw, true, stub)
		uTest, errTest := CheckURL(ctx, raw, false, stub)
		if errLive == nil && errTest != nil {
			t.Fatalf("%q is accepted in live but not in test: %v", raw, errTest)
		}
		for _, err := range []error{errLive, errTest} {
			var ue *URLError
			if err != nil && (!errors.As(err, &ue) || ue.Reason == "") {
				t.Fatalf("%q: error %#v is not a *URLError with a reason", raw, err)
			}
		}
		if errTest != nil {
			return
		}
		if len(raw) > MaxURLLength || strings.ContainsAny(raw, "# \t\r\n") {
			t.Fatalf("%q accepted", raw)
		}
		if uTest.User != nil || uTest.Fragment != "" || uTest.Hostname() == "" || !uTest.IsAbs() ||
			(uTest.Scheme != "http" && uTest.Scheme != "https") {
			t.Fatalf("%q accepted as %#v", raw, uTest)
		}
		// What the sender will parse is what was checked.
		again, err := url.Parse(raw)
		if err != nil || again.Hostname() != uTest.Hostname() || again.Port() != uTest.Port() {
			t.Fatalf("%q parses again as %v, %v", raw, again, err)
		}
		if errLive == nil {
			if uLive.Scheme != "https" {
				t.Fatalf("%q accepted in live without https", raw)
			}
			host := uLive.Hostname()
			if a, err := netip.ParseAddr(host); err == nil && !Public(a) {
				t.Fatalf("%q accepted in live with address %s", raw, a)
			}
			if strings.Contains(host, "loop") {
				t.Fatalf("%q accepted in live though its host resolves to loopback", raw)
			}
		}
	})
}
