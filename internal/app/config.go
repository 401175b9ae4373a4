package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/currency"

	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Config is the server's configuration (README, Configuration): environment variables,
// overridden by flags of the same name in kebab case.
type Config struct {
	Addr          string
	Database      string
	Env           string // "test" or "live"
	SandboxToken  string
	Clock         string // "system" or "manual"
	Secret        string
	Currencies    []string
	PartnerSecret string
	PublicURL     string
	// Files is where file bytes are kept (file.OpenBucket).
	Files    string
	LogLevel slog.Level
	// DebugAddr, when set, serves net/http/pprof there: a separate listener
	// so profiles are never reachable on the API's address.
	DebugAddr string

	RateLimitAddress    ratelimit.Rule
	RateLimitCredential ratelimit.Rule
	RateLimitSignIn     ratelimit.Rule
	// Wrong passwords (identity.PasswordGuard): refused per (email, client
	// address) past WrongPasswords; slowed by SlowSignInDelay per email past SlowSignInAfter.
	WrongPasswords  identity.Budget
	SlowSignInAfter identity.Budget
	SlowSignInDelay time.Duration
	// RealtimePing is how often an idle realtime connection gets a
	// keep-alive, and its session and membership are checked again.
	RealtimePing time.Duration
}

// setting is one configuration variable.
type setting struct {
	env, def, help string
	value          *string
}

// knownSettings are the server's configuration variables: the one list the
// flags, the unknown-variable warning and the configuration reference of
// docs/operations.md (go generate ./internal/app/) are made from.
var knownSettings = []setting{
	{"STRONGROOM_ADDR", "127.0.0.1:8080", "listen address; :0 picks a free port", nil},
	{"STRONGROOM_DATABASE", "sqlite:strongroom.db", "sqlite:PATH or a postgres:// URL", nil},
	{"STRONGROOM_ENV", "test", "test (sandbox) or live", nil},
	{"STRONGROOM_SANDBOX_TOKEN", "", "bearer of the sandbox helpers (test only; generated when unset)", nil},
	{"STRONGROOM_CLOCK", "system", "system, or manual (test only)", nil},
	{"STRONGROOM_SECRET", "", "root secret, at least 32 bytes (required in live; generated in test)", nil},
	{"STRONGROOM_CURRENCIES", "AUD,CAD,CHF,EUR,GBP,HKD,JPY,MXN,SGD,USD", "currencies an organization may hold", nil},
	{"STRONGROOM_PARTNER_SECRET", "", "HMAC key of partner webhooks (required in live)", nil},
	{"STRONGROOM_FILES", "file:strongroom-files", "where file bytes are kept: file:DIR, or s3://BUCKET?endpoint=URL&region=R when several instances serve one database", nil},
	{"STRONGROOM_PUBLIC_URL", "http://localhost:8080", "the service's web address; passkeys are bound to it", nil},
	{"STRONGROOM_LOG_LEVEL", "info", "debug, info, warn or error", nil},
	{"STRONGROOM_RATE_LIMIT_ADDRESS", "1200/1m", "requests per client address: N/DURATION, or off", nil},
	{"STRONGROOM_RATE_LIMIT_CREDENTIAL", "600/1m", "requests per session or API key: N/DURATION, or off", nil},
	{"STRONGROOM_RATE_LIMIT_SIGN_IN", "10/1m", "sign-in family requests per client address: N/DURATION, or off", nil},
	{"STRONGROOM_RATE_LIMIT_WRONG_PASSWORD", "10/15m", "wrong passwords per email and client address, then 429 for that pair (known devices exempt): N/DURATION, or off", nil},
	{"STRONGROOM_SLOW_SIGN_IN_AFTER", "20/1h", "wrong passwords per email from all addresses, past which its sign-ins wait STRONGROOM_SLOW_SIGN_IN_DELAY: N/DURATION, or off", nil},
	{"STRONGROOM_SLOW_SIGN_IN_DELAY", "1s", "how long a slowed sign-in waits (a duration; 0 for none)", nil},
	{"STRONGROOM_DEBUG_ADDR", "", "address of a separate listener serving /debug/pprof (off when empty; keep it on loopback)", nil},
	{"STRONGROOM_REALTIME_PING", "25s", "how often the realtime channel sends a keep-alive and checks the session again (a duration from 1s to 5m)", nil},
}

// clientVariables are the variables the command line's client commands read
// (not settings of the server), so that the server does not take them for
// misspelt settings.
var clientVariables = []setting{
	{"STRONGROOM_URL", "http://127.0.0.1:8080", "the server the client commands speak to", nil},
	{"STRONGROOM_TOKEN", "", "a session token or API key the client commands use instead of the token file", nil},
}

func settings(raw map[string]*string) []setting {
	s := slices.Clone(knownSettings)
	for i := range s {
		v := new(string)
		raw[s[i].env] = v
		s[i].value = v
	}
	return s
}

// flagName is the kebab-case flag of a variable: STRONGROOM_LOG_LEVEL → log-level.
func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "STRONGROOM_")), "_", "-")
}

// loadConfig reads the environment, then the flags in args.
func loadConfig(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	raw := map[string]*string{}
	fs := flag.NewFlagSet("strongroom server", flag.ContinueOnError)
	// The command line prints the one-line error and points to --help (which
	// lists each flag once, ConfigFlags), so the flag package prints nothing.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, s := range settings(raw) {
		*s.value = s.def
		if v := getenv(s.env); v != "" {
			*s.value = v
		}
		// Both --log-level and --strongroom-log-level are accepted.
		fs.StringVar(s.value, flagName(s.env), *s.value, s.help+" ($"+s.env+")")
		fs.StringVar(s.value, "strongroom-"+flagName(s.env), *s.value, "same as --"+flagName(s.env))
	}
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			return Config{}, err
		}
		return Config{}, &UsageError{err}
	}
	if fs.NArg() > 0 {
		return Config{}, &UsageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	get := func(env string) string { return strings.TrimSpace(*raw[env]) }
	var problems []error

	c := Config{
		Addr:          get("STRONGROOM_ADDR"),
		Database:      get("STRONGROOM_DATABASE"),
		Env:           get("STRONGROOM_ENV"),
		SandboxToken:  get("STRONGROOM_SANDBOX_TOKEN"),
		Clock:         get("STRONGROOM_CLOCK"),
		Secret:        *raw["STRONGROOM_SECRET"],
		PartnerSecret: *raw["STRONGROOM_PARTNER_SECRET"],
		PublicURL:     get("STRONGROOM_PUBLIC_URL"),
		Files:         get("STRONGROOM_FILES"),
		DebugAddr:     get("STRONGROOM_DEBUG_ADDR"),
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, fmt.Errorf("STRONGROOM_PUBLIC_URL must be an http(s) URL such as https://bank.example.com"))
	}
	if c.Env != "test" && c.Env != "live" {
		problems = append(problems, fmt.Errorf("STRONGROOM_ENV must be test or live, not %q", c.Env))
	}
	if c.Clock != "system" && c.Clock != "manual" {
		problems = append(problems, fmt.Errorf("STRONGROOM_CLOCK must be system or manual, not %q", c.Clock))
	}
	if c.Env == "live" {
		if c.Secret == "" {
			problems = append(problems, errors.New("STRONGROOM_SECRET is required in live: set it to a random value of at least 32 bytes; the server will not start without it"))
		}
		if c.PartnerSecret == "" {
			problems = append(problems, errors.New("STRONGROOM_PARTNER_SECRET is required in live: set it to the HMAC key the banking partner signs webhooks with"))
		}
		if c.Clock == "manual" {
			problems = append(problems, errors.New("STRONGROOM_CLOCK=manual is only allowed in the test environment"))
		}
		if c.SandboxToken != "" {
			problems = append(problems, errors.New("STRONGROOM_SANDBOX_TOKEN is only used in the test environment; unset it in live"))
		}
	}
	if c.Secret != "" && len(c.Secret) < keyring.MinRootSecret {
		problems = append(problems, fmt.Errorf("STRONGROOM_SECRET must be at least %d bytes long", keyring.MinRootSecret))
	}
	for _, code := range strings.Split(get("STRONGROOM_CURRENCIES"), ",") {
		code = strings.ToUpper(strings.TrimSpace(code))
		if code == "" {
			continue
		}
		if u, err := currency.ParseISO(code); err != nil || u.String() != code {
			problems = append(problems, fmt.Errorf("STRONGROOM_CURRENCIES: %q is not an ISO 4217 currency code", code))
			continue
		}
		c.Currencies = append(c.Currencies, code)
	}
	slices.Sort(c.Currencies)
	c.Currencies = slices.Compact(c.Currencies)
	if len(c.Currencies) == 0 {
		problems = append(problems, errors.New("STRONGROOM_CURRENCIES must name at least one currency"))
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("STRONGROOM_LOG_LEVEL"))); err != nil {
		problems = append(problems, fmt.Errorf("STRONGROOM_LOG_LEVEL must be debug, info, warn or error"))
	}
	for env, rule := range map[string]*ratelimit.Rule{
		"STRONGROOM_RATE_LIMIT_ADDRESS":    &c.RateLimitAddress,
		"STRONGROOM_RATE_LIMIT_CREDENTIAL": &c.RateLimitCredential,
		"STRONGROOM_RATE_LIMIT_SIGN_IN":    &c.RateLimitSignIn,
	} {
		r, err := parseRule(flagName(env), get(env))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", env, err))
		}
		*rule = r
	}
	for env, budget := range map[string]*identity.Budget{
		"STRONGROOM_RATE_LIMIT_WRONG_PASSWORD": &c.WrongPasswords,
		"STRONGROOM_SLOW_SIGN_IN_AFTER":        &c.SlowSignInAfter,
	} {
		b, err := parseBudget(get(env))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", env, err))
		}
		*budget = b
	}
	if d, err := time.ParseDuration(get("STRONGROOM_SLOW_SIGN_IN_DELAY")); err != nil || d < 0 || d > time.Minute {
		problems = append(problems, fmt.Errorf("STRONGROOM_SLOW_SIGN_IN_DELAY must be a duration from 0 to 1m such as 1s, not %q", get("STRONGROOM_SLOW_SIGN_IN_DELAY")))
	} else {
		c.SlowSignInDelay = d
	}
	if d, err := time.ParseDuration(get("STRONGROOM_REALTIME_PING")); err != nil || d < time.Second || d > 5*time.Minute {
		problems = append(problems, fmt.Errorf("STRONGROOM_REALTIME_PING must be a duration from 1s to 5m such as 25s, not %q", get("STRONGROOM_REALTIME_PING")))
	} else {
		c.RealtimePing = d
	}
	return c, errors.Join(problems...)
}

// parseBudget reads "N/DURATION" (N wrong passwords within a sliding DURATION) or "off".
func parseBudget(s string) (identity.Budget, error) {
	if s == "off" || s == "0" {
		return identity.Budget{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err1 := strconv.Atoi(n)
	window, err2 := time.ParseDuration(per)
	if !ok || err1 != nil || err2 != nil || count < 1 || window <= 0 {
		return identity.Budget{}, fmt.Errorf("want N/DURATION such as 10/15m, or off; got %q", s)
	}
	return identity.Budget{Count: count, Window: window}, nil
}

// parseRule reads "N/DURATION" (N requests per DURATION, in bursts of up to N) or "off".
func parseRule(name, s string) (ratelimit.Rule, error) {
	if s == "off" || s == "0" {
		return ratelimit.Rule{Name: name}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err1 := strconv.Atoi(n)
	window, err2 := time.ParseDuration(per)
	if !ok || err1 != nil || err2 != nil || count < 1 || window <= 0 {
		return ratelimit.Rule{}, fmt.Errorf("want N/DURATION such as 10/1m, or off; got %q", s)
	}
	return ratelimit.Rule{Name: name, Rate: float64(count) / window.Seconds(), Burst: count}, nil
}
