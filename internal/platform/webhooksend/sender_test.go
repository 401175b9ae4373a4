package webhooksend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// receiver is a local server that counts the connections it accepts.
type receiver struct {
	*httptest.Server
	conns atomic.Int64
}

func newReceiver(t *testing.T, h http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(h)
	r.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.Start()
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) port() string {
	u, _ := url.Parse(r.URL)
	return u.Port()
}

func message(t *testing.T, secrets ...Secret) Message {
	t.Helper()
	if len(secrets) == 0 {
		s, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		secrets = []Secret{s}
	}
	return Message{ID: "evt_0123", Body: []byte(`{"id":"evt_0123","type":"webhook.ping","data":{}}`), Secrets: secrets}
}

func TestSendDeliversASignedMessage(t *testing.T) {
	oldS, _ := NewSecret()
	newS, _ := NewSecret()
	type got struct {
		method, ctype, ua string
		header            http.Header
		body              []byte
	}
	seen := make(chan got, 1)
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen <- got{r.Method, r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	})
	s := New(Options{})
	defer s.Close()
	msg := message(t, newS, oldS)
	res := s.Send(context.Background(), rcv.URL+"/hook", msg)
	if !res.Succeeded() || res.Status != http.StatusNoContent || res.Err != nil || res.ErrorText() != "" {
		t.Fatalf("Send = %+v (%s), want 204", res, res.ErrorText())
	}
	if res.Duration <= 0 || res.Timestamp.IsZero() {
		t.Errorf("Send = %+v, want a duration and a timestamp", res)
	}
	g := <-seen
	if g.method != http.MethodPost || g.ctype != "application/json" || g.ua != UserAgent {
		t.Errorf("request %s, Content-Type %q, User-Agent %q", g.method, g.ctype, g.ua)
	}
	if !bytes.Equal(g.body, msg.Body) || g.header.Get("webhook-id") != msg.ID {
		t.Errorf("body %q, webhook-id %q", g.body, g.header.Get("webhook-id"))
	}
	for name, sec := range map[string]Secret{"new": newS, "old": oldS} {
		wh, _ := standardwebhooks.NewWebhook(sec.Reveal())
		if err := wh.Verify(g.body, g.header); err != nil {
			t.Errorf("the receiver cannot verify with the %s secret: %v", name, err)
		}
	}
}

func TestSendKeepsTheGivenTimestamp(t *testing.T) {
	var ts atomic.Value
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { ts.Store(r.Header.Get("webhook-timestamp")) })
	at := time.Unix(1_800_000_000, 0)
	s := New(Options{Now: func() time.Time { return at }})
	if res := s.Send(context.Background(), rcv.URL, message(t)); !res.Succeeded() || !res.Timestamp.Equal(at) {
		t.Fatalf("Send = %+v", res)
	}
	if ts.Load() != "1800000000" {
		t.Errorf("webhook-timestamp = %v, want the Sender's Now in Unix seconds", ts.Load())
	}
	msg := message(t)
	msg.Timestamp = time.Unix(1_700_000_000, 0)
	s.Send(context.Background(), rcv.URL, msg)
	if ts.Load() != "1700000000" {
		t.Errorf("webhook-timestamp = %v, want the message's", ts.Load())
	}
}

func TestSendStatuses(t *testing.T) {
	for _, tc := range []struct {
		status          int
		succeeded, gone bool
		text            string
	}{
		{200, true, false, ""},
		{202, true, false, ""},
		{299, true, false, ""},
		{400, false, false, "HTTP 400"},
		{410, false, true, "HTTP 410"},
		{500, false, false, "HTTP 500"},
		{503, false, false, "HTTP 503"},
	} {
		rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			io.WriteString(w, "answer")
		})
		res := New(Options{}).Send(context.Background(), rcv.URL, message(t))
		if res.Status != tc.status || res.Succeeded() != tc.succeeded || res.Gone() != tc.gone ||
			!strings.Contains(res.ErrorText(), tc.text) || string(res.Body) != "answer" {
			t.Errorf("status %d: Send = %+v (%q)", tc.status, res, res.ErrorText())
		}
	}
}

func TestSendFollowsNoRedirect(t *testing.T) {
	var followed atomic.Int64
	target := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { followed.Add(1) })
	for _, code := range []int{301, 302, 303, 307, 308} {
		rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", code)
		})
		res := New(Options{}).Send(context.Background(), rcv.URL, message(t))
		if res.Succeeded() || res.Status != code || !strings.Contains(res.ErrorText(), "redirect") {
			t.Errorf("redirect %d: Send = %+v (%q), want a failed attempt", code, res, res.ErrorText())
		}
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

func TestSendReadsAtMostOneKiB(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16) // 5 MiB
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write(big)
	})
	res := New(Options{}).Send(context.Background(), rcv.URL, message(t))
	if !res.Succeeded() || len(res.Body) != MaxResponseBody || !bytes.Equal(res.Body, big[:MaxResponseBody]) {
		t.Fatalf("Send = status %d, %d bytes kept; want 200 and the first %d bytes", res.Status, len(res.Body), MaxResponseBody)
	}
	small := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ok":true}`) })
	if res := New(Options{}).Send(context.Background(), small.URL, message(t)); string(res.Body) != `{"ok":true}` {
		t.Errorf("a short body kept as %q", res.Body)
	}
}

func TestSendStopsAtTheTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	s := New(Options{Timeout: 150 * time.Millisecond})
	res := s.Send(context.Background(), slow.URL, message(t))
	if res.Succeeded() || res.Status != 0 || !errors.Is(res.Err, ErrTimeout) {
		t.Fatalf("Send = %+v, want a timeout", res)
	}
	if res.ErrorText() != "no answer within 150ms" {
		t.Errorf("ErrorText = %q", res.ErrorText())
	}
	if res.Duration < 150*time.Millisecond {
		t.Errorf("Duration = %s, shorter than the timeout", res.Duration)
	}

	// A receiver that answers at once but trickles its body: the status
	// counts, and what was read in time is kept.
	trickle := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "ok")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	res = s.Send(context.Background(), trickle.URL, message(t))
	if !res.Succeeded() || string(res.Body) != "ok" {
		t.Errorf("Send = %+v, want 200 with the body read in time", res)
	}
}

func TestSendCancelled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices the client going away once the body is read
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	res := New(Options{}).Send(ctx, rcv.URL, message(t))
	if res.Succeeded() || errors.Is(res.Err, ErrTimeout) || res.ErrorText() != "the attempt was cancelled" {
		t.Errorf("Send = %+v (%q), want cancelled", res, res.ErrorText())
	}
}

// In live, every connection is checked as it is made: an address literal
// and a name that resolves inside are refused before a byte is sent, and
// the receiver sees no connection.
func TestSendLiveRefusesNonPublicAddressesAtConnect(t *testing.T) {
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	p := rcv.port()
	res := New(Options{}).Send(context.Background(), rcv.URL, message(t))
	if !res.Succeeded() || rcv.conns.Load() != 1 {
		t.Fatalf("in test the local receiver is reached: %+v", res)
	}
	rcv.conns.Store(0)

	// A name that was public at creation now resolves to loopback (DNS rebinding).
	rebound := HostMap{
		"rebind.example.com": {netip.MustParseAddr("127.0.0.1")},
		"mapped.example.com": {netip.MustParseAddr("::ffff:127.0.0.1")},
		"v6.example.com":     {netip.MustParseAddr("::1")},
	}
	live := New(Options{Live: true, Resolver: rebound})
	for _, u := range []string{
		"http://127.0.0.1:" + p,
		"https://127.0.0.1:" + p,
		"http://[::1]:" + p,
		"http://[::ffff:127.0.0.1]:" + p,
		"https://[::ffff:7f00:1]:" + p,
		"http://rebind.example.com:" + p,
		"https://rebind.example.com:" + p + "/hook",
		"https://mapped.example.com:" + p,
		"https://v6.example.com:" + p,
		"http://localhost:" + p, // not in the resolver: not found
	} {
		res := live.Send(context.Background(), u, message(t))
		if res.Succeeded() || res.Status != 0 || res.Err == nil {
			t.Errorf("live Send(%s) = %+v, want refused", u, res)
			continue
		}
		if strings.Contains(u, "localhost") {
			if res.ErrorText() != "the host has no address" {
				t.Errorf("live Send(%s): %q", u, res.ErrorText())
			}
			continue
		}
		if !errors.Is(res.Err, ErrAddressNotAllowed) {
			t.Errorf("live Send(%s) = %v, want ErrAddressNotAllowed", u, res.Err)
		}
		if want := "refused to connect: the host resolved to an address that is not public"; res.ErrorText() != want {
			t.Errorf("live Send(%s): ErrorText %q", u, res.ErrorText())
		}
	}
	if n := rcv.conns.Load(); n != 0 {
		t.Errorf("the receiver accepted %d connections in live", n)
	}
}

// A name the resolver maps to the receiver is reached in test: the
// resolver is the one the Sender connects with.
func TestSendTestResolvesWithTheInjectedResolver(t *testing.T) {
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	s := New(Options{Resolver: HostMap{"hooks.test": {netip.MustParseAddr("127.0.0.1")}}})
	if res := s.Send(context.Background(), "http://hooks.test:"+rcv.port()+"/x", message(t)); !res.Succeeded() {
		t.Fatalf("Send = %+v (%s)", res, res.ErrorText())
	}
	if err := s.CheckURL(context.Background(), "http://hooks.test/x"); err != nil {
		t.Errorf("test CheckURL: %v", err)
	}
	live := New(Options{Live: true, Resolver: HostMap{"hooks.test": {netip.MustParseAddr("127.0.0.1")}}})
	if err := live.CheckURL(context.Background(), "https://hooks.test/x"); !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("live CheckURL of a name resolving to loopback: %v", err)
	}
	// Link-local (cloud metadata) is refused even in test; the resolver
	// keeps this test off the network.
	meta := New(Options{Resolver: HostMap{"meta.test": {netip.MustParseAddr("169.254.169.254")}}})
	res := meta.Send(context.Background(), "http://meta.test:"+rcv.port(), message(t))
	if !errors.Is(res.Err, ErrAddressNotAllowed) || !strings.Contains(res.ErrorText(), "169.254.169.254") {
		t.Errorf("test Send to link-local = %+v (%q)", res, res.ErrorText())
	}
}

func TestSendFailures(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	res := New(Options{}).Send(context.Background(), "http://"+addr, message(t))
	if res.Succeeded() || res.ErrorText() != "the connection was refused" {
		t.Errorf("closed port: %+v (%q)", res, res.ErrorText())
	}

	// A receiver that closes without answering.
	hang := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close()
	})
	res = New(Options{}).Send(context.Background(), hang.URL, message(t))
	if res.Succeeded() || res.Err == nil || res.ErrorText() == "" {
		t.Errorf("closed without answer: %+v", res)
	}

	// Plain HTTP spoken to an https URL.
	plain := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	res = New(Options{}).Send(context.Background(), strings.Replace(plain.URL, "http:", "https:", 1), message(t))
	if res.Succeeded() || !strings.Contains(res.ErrorText(), "TLS") {
		t.Errorf("https to a plain server: %+v (%q)", res, res.ErrorText())
	}

	// A self-signed certificate is not trusted; the test's own is when given.
	tlsRcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsRcv.Close()
	res = New(Options{}).Send(context.Background(), tlsRcv.URL, message(t))
	if res.Succeeded() || !strings.Contains(res.ErrorText(), "certificate") {
		t.Errorf("untrusted certificate: %+v (%q)", res, res.ErrorText())
	}
	trusting := New(Options{TLSConfig: tlsRcv.Client().Transport.(*http.Transport).TLSClientConfig})
	if res := trusting.Send(context.Background(), tlsRcv.URL, message(t)); !res.Succeeded() {
		t.Errorf("trusted certificate: %+v (%q)", res, res.ErrorText())
	}

	// A message that cannot be signed is never sent.
	res = New(Options{}).Send(context.Background(), plain.URL, Message{ID: "evt_1"})
	if res.Succeeded() || res.Err == nil {
		t.Errorf("unsigned message: %+v", res)
	}
	res = New(Options{}).Send(context.Background(), "http://bad host/", message(t))
	if res.Succeeded() || res.Err == nil {
		t.Errorf("bad URL: %+v", res)
	}
}

// Keeping connections alive is what lets one instance deliver thousands a second.
func TestSendReusesConnections(t *testing.T) {
	rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	s := New(Options{})
	for range 20 {
		if res := s.Send(context.Background(), rcv.URL, message(t)); !res.Succeeded() {
			t.Fatal(res.ErrorText())
		}
	}
	if n := rcv.conns.Load(); n != 1 {
		t.Errorf("20 sequential attempts opened %d connections, want 1", n)
	}
}
