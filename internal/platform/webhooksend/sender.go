package webhooksend

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// Timeout bounds one attempt: connecting, sending, the response's headers
// and the part of its body that is read.
const Timeout = 10 * time.Second

// MaxResponseBody is how much of a response's body is read (and kept for the
// deliveries log).
const MaxResponseBody = 1024

// UserAgent is sent with every attempt.
const UserAgent = "Strongroom-Webhooks/1.0"

// Resolver looks up a host's addresses; *net.Resolver is one. Tests inject a
// HostMap.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// HostMap is a Resolver that knows only the names it holds (for tests: a
// name that resolves to loopback). Names are matched without case and
// without a final dot; other names are not found.
type HostMap map[string][]netip.Addr

// LookupNetIP returns the addresses of host of the network "ip", "ip4" or "ip6".
func (m HostMap) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range m[strings.ToLower(strings.TrimSuffix(host, "."))] {
		switch {
		case network == "ip4" && !a.Unmap().Is4(), network == "ip6" && !a.Is6():
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// Options configure a Sender.
type Options struct {
	// Live sends only to public addresses (environment live); otherwise
	// loopback and private addresses are allowed too (environment test).
	Live bool
	// Timeout bounds one attempt; zero means Timeout (10 s). Tests shorten it.
	Timeout time.Duration
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver Resolver
	// Now gives the webhook-timestamp of a message that has none; nil means
	// time.Now. The timestamp is the wall time of the attempt, since
	// receivers compare it with their own clock.
	Now func() time.Time
	// TLSConfig, if set, is used for https (tests trust their own server
	// with it); nil means the system's roots.
	TLSConfig *tls.Config
}

// Sender makes delivery attempts. It is safe for concurrent use and keeps
// connections to receivers alive between attempts.
type Sender struct {
	live     bool
	timeout  time.Duration
	resolver Resolver
	now      func() time.Time
	dialer   *net.Dialer
	client   *http.Client
}

// New returns a Sender.
func New(opts Options) *Sender {
	s := &Sender{
		live:     opts.Live,
		timeout:  opts.Timeout,
		resolver: opts.Resolver,
		now:      opts.Now,
	}
	if s.timeout <= 0 {
		s.timeout = Timeout
	}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.dialer = &net.Dialer{
		Timeout:   s.timeout,
		KeepAlive: 30 * time.Second,
		Control:   control(s.live),
	}
	tr := &http.Transport{
		Proxy:                  nil, // never through a proxy: the address checked is the one connected to
		DialContext:            s.dial,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        opts.TLSConfig,
		TLSHandshakeTimeout:    s.timeout,
		MaxIdleConns:           512,
		MaxIdleConnsPerHost:    64, // several endpoints may share a host, four attempts in flight each
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	s.client = &http.Client{
		Transport: tr,
		Timeout:   s.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return s
}

// Live reports whether the Sender sends only to public addresses.
func (s *Sender) Live() bool { return s.live }

// CheckURL is CheckURL with the Sender's environment and resolver.
func (s *Sender) CheckURL(ctx context.Context, raw string) error {
	_, err := CheckURL(ctx, raw, s.live, s.resolver)
	return err
}

// Close closes the idle connections.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

// dial resolves the host with the Sender's resolver and connects to its
// addresses in turn; the dialer's Control hook judges each address as it
// connects, so nothing else decides which addresses are reached.
func (s *Sender) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = s.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	}
	var first, refused error
	for _, a := range addrs {
		conn, err := s.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, ErrAddressNotAllowed) && refused == nil {
			refused = err
		} else if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if refused != nil {
		return nil, refused
	}
	return nil, first
}

// Message is what one attempt sends.
type Message struct {
	// ID is the webhook-id: the event's id, the same on every attempt.
	ID string
	// Timestamp is the webhook-timestamp; zero means the Sender's Now at
	// the attempt.
	Timestamp time.Time
	// Body is the JSON sent.
	Body []byte
	// Secrets sign the message, in order (the new secret first after a
	// rotation, then the old one while it still signs).
	Secrets []Secret
}

// Result is what one attempt came to.
type Result struct {
	// Status is the response's status code; 0 when no response came.
	Status int
	// Body holds the first MaxResponseBody bytes of the response's body at most.
	Body []byte
	// Duration is the time from the start of the attempt until the body
	// was read (or it failed).
	Duration time.Duration
	// Timestamp is the webhook-timestamp sent.
	Timestamp time.Time
	// Err says why no response came: the address was refused
	// (ErrAddressNotAllowed), the host has no address, the connection or TLS
	// failed, the attempt timed out (ErrTimeout) or the message could not be
	// signed. Nil when a response came, whatever its status.
	Err error
}

// ErrTimeout is wrapped by Result.Err when an attempt ran out of time.
var ErrTimeout = errors.New("timed out")

// Succeeded reports whether the receiver answered 2xx. A redirect (3xx) is
// not followed and is a failed attempt.
func (r Result) Succeeded() bool { return r.Err == nil && r.Status >= 200 && r.Status < 300 }

// Gone reports whether the receiver answered 410 Gone: it asks for no more
// deliveries.
func (r Result) Gone() bool { return r.Err == nil && r.Status == http.StatusGone }

// ErrorText says in a short display-grade sentence why the attempt failed,
// for the deliveries log; "" when it succeeded.
func (r Result) ErrorText() string {
	switch {
	case r.Succeeded():
		return ""
	case r.Err == nil && r.Status >= 300 && r.Status < 400:
		return "the receiver answered HTTP " + strconv.Itoa(r.Status) + " (redirects are not followed)"
	case r.Err == nil:
		return "the receiver answered HTTP " + strconv.Itoa(r.Status)
	}
	var addrErr *AddressError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(r.Err, &addrErr):
		if addrErr.Live {
			return "refused to connect: the host resolved to an address that is not public"
		}
		return "refused to connect: " + addrErr.Error()
	case errors.Is(r.Err, ErrTimeout):
		return r.Err.Error()
	case errors.As(r.Err, &dnsErr):
		if dnsErr.IsNotFound {
			return "the host has no address"
		}
		return "the host could not be looked up"
	case errors.As(r.Err, &certErr):
		return "the receiver's TLS certificate is not valid: " + certErr.Err.Error()
	case errors.As(r.Err, &recordErr) || strings.Contains(r.Err.Error(), "HTTP response to HTTPS client"):
		return "the receiver did not answer with TLS"
	case isRefused(r.Err):
		return "the connection was refused"
	case errors.Is(r.Err, io.EOF) || errors.Is(r.Err, io.ErrUnexpectedEOF):
		return "the receiver closed the connection without answering"
	case errors.Is(r.Err, context.Canceled):
		return "the attempt was cancelled"
	}
	return "the attempt failed: could not reach the receiver"
}

func isRefused(err error) bool {
	var sysErr *os.SyscallError
	return errors.As(err, &sysErr) && sysErr.Syscall == "connect"
}

// Send makes one attempt: it signs msg and POSTs its body to url with
// Content-Type application/json and the Standard Webhooks headers, follows
// no redirect, reads at most MaxResponseBody bytes of the response and stops
// at the Sender's timeout. It never returns an error of its own: everything
// is in the Result.
func (s *Sender) Send(ctx context.Context, url string, msg Message) (res Result) {
	res.Timestamp = msg.Timestamp
	if res.Timestamp.IsZero() {
		res.Timestamp = s.now()
	}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(msg.Body))
	if err != nil {
		res.Err = fmt.Errorf("webhooksend: request: %w", err)
		return res
	}
	if err := SetHeaders(req.Header, msg.ID, res.Timestamp, msg.Body, msg.Secrets...); err != nil {
		res.Err = err
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)

	resp, err := s.client.Do(req)
	if err != nil {
		res.Err = s.classify(ctx, err)
		return res
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	// The status decides; a body that stops early or too late keeps what was read.
	res.Body, _ = io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	return res
}

// classify wraps a timeout in ErrTimeout so the deliveries log says so.
func (s *Sender) classify(ctx context.Context, err error) error {
	var ne net.Error
	if errors.Is(err, ErrAddressNotAllowed) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &timeoutError{limit: s.timeout, err: err}
		}
	}
	return err
}

// timeoutError is an attempt that ran out of time.
type timeoutError struct {
	limit time.Duration
	err   error
}

func (e *timeoutError) Error() string   { return fmt.Sprintf("no answer within %s", e.limit) }
func (e *timeoutError) Unwrap() []error { return []error{ErrTimeout, e.err} }
