package main

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v3"
)

// TestGCPercentDefaultsByCommand checks that repair collects at Go's default
// unless told otherwise, and everything else at defaultGCPercent.
func TestGCPercentDefaultsByCommand(t *testing.T) {
	for _, tc := range []struct {
		env  string // HBGRAPH_GC_PERCENT, "" for unset
		args []string
		want int
	}{
		{"", nil, defaultGCPercent},
		{"", []string{"import"}, defaultGCPercent},
		{"", []string{"repair"}, 100},
		{"", []string{"--gc-percent", "800", "repair"}, 800},
		{"", []string{"repair", "--gc-percent", "300"}, 300},
		{"", []string{"--gc-percent", "0", "repair"}, 0},
		{"200", []string{"repair"}, 200},
		{"200", nil, 200},
	} {
		if tc.env != "" {
			t.Setenv("HBGRAPH_GC_PERCENT", tc.env)
		}
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := cfg.gcPercentFor(); got != tc.want {
			t.Errorf("HBGRAPH_GC_PERCENT=%q %q: gc percent %d, want %d", tc.env, tc.args, got, tc.want)
		}
	}
}

// TestListenBeyondLoopbackNeedsTheFlag: without authentication hbgraph
// serves beyond loopback, on either listener, only when told to.
func TestListenBeyondLoopbackNeedsTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"--listen", ":8080"}, false},
		{[]string{"--listen", "0.0.0.0:8080"}, false},
		{[]string{"--admin-listen", "10.1.2.3:9090"}, false},
		{[]string{"--listen", "[::1]:8080", "--admin-listen", "localhost:9090"}, true},
		{[]string{"--listen", ":8080", "--insecure-no-auth"}, true},
		{[]string{"--listen", ":8080", "--auth-jwks-url", "https://idp.example.com/jwks.json"}, true},
		{[]string{"--listen", ":8080", "--admin-listen", ":9090", "--auth-jwks-file", "keys.pem"}, true},
	} {
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkListen(cfg, zerolog.Nop()); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.args, err, tc.ok)
		}
	}
	if _, err := parseConfig([]string{"--cors-origins", "app.example.com"}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}

// TestREADMEListsEveryFlag keeps the README's configuration and limits
// tables in step with the flags: every flag of every command has a row
// with its environment variable and default, and no row names a flag that
// does not exist.
func TestREADMEListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ env, def, meaning string } // env: "" in the limits table
	rows := map[string]row{}                    // flag name -> its row
	flagName := regexp.MustCompile("`--([a-z0-9-]+\\*?)`")
	table := ""
	for _, line := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(line, "| flag | env | default |"):
			table = "configuration"
			continue
		case strings.HasPrefix(line, "| bound | flag | default |"):
			table = "limits"
			continue
		case !strings.HasPrefix(line, "| "):
			table = ""
			continue
		}
		cells := strings.Split(line, "|")
		if table == "" || len(cells) < 5 {
			continue
		}
		// configuration: | flag | env | default | meaning |; limits:
		// | bound | flag | default | what happens past it |. A row that
		// groups flags names no variable ("HBGRAPH_..."): their own rows
		// do.
		at, r := 2, row{def: strings.TrimSpace(cells[3])}
		if table == "configuration" {
			at, r.env, r.meaning = 1, strings.Trim(strings.TrimSpace(cells[2]), "`"), strings.TrimSpace(cells[4])
			if strings.Contains(r.env, "...") {
				continue
			}
		}
		for _, m := range flagName.FindAllStringSubmatch(cells[at], -1) {
			// A bound's flag may also have a configuration row: that one
			// names its variable.
			if old, seen := rows[m[1]]; !seen || old.env == "" {
				rows[m[1]] = r
			}
		}
	}
	var cfg config
	root := newCommand(&cfg, func(*cli.Command, string) error { return nil })
	exists := map[string]bool{}
	for _, cmd := range append([]*cli.Command{root}, root.Commands...) {
		for _, f := range cmd.Flags {
			doc := f.(cli.DocGenerationFlag)
			name := f.Names()[0]
			exists[name] = true
			env := "HBGRAPH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
			if cmd != root && !slices.Contains([]string{"regions", "admin-listen"}, name) {
				env = "HBGRAPH_" + strings.ToUpper(cmd.Name) + "_" + strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(name, cmd.Name+"-"), "-", "_"))
			}
			if got := doc.GetEnvVars(); len(got) != 1 || got[0] != env {
				t.Errorf("--%s: environment %v, want %s", name, got, env)
			}
			r, ok := rows[name]
			if !ok {
				t.Errorf("--%s (%s) has no row in README.md's configuration or limits table", name, cmd.Name)
				continue
			}
			if r.env != env && (r.env != "" || !strings.Contains(string(readme), "`--max-tokens` is `HBGRAPH_MAX_TOKENS`")) {
				t.Errorf("README.md: --%s's environment variable is %q, want %q", name, r.env, env)
			}
			checkREADMERow(t, f, r.def, r.meaning)
		}
	}
	for name := range rows {
		if prefix, pattern := strings.CutSuffix(name, "*"); pattern {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(exists)), func(n string) bool { return strings.HasPrefix(n, prefix) }) {
				t.Errorf("README.md names --%s, which matches no flag", name)
			}
		} else if !exists[name] {
			t.Errorf("README.md names --%s, which is no flag", name)
		}
	}
}

// helpDefault is the default --help shows for f ("" when it shows none).
var helpDefault = regexp.MustCompile(`\(default: ([^)]*)\)`)

// flagsNamed are the flags a text names (--name).
var flagsNamed = regexp.MustCompile("--[a-z0-9-]+")

// checkREADMERow compares a flag with its README row: the default column
// starts with the default --help shows (in backquotes), or says there is
// none when --help shows none; the help names no variable of its own (it
// appends the variable itself); and the README's meaning names the same
// other flags the help does.
func checkREADMERow(t *testing.T, f cli.Flag, def, meaning string) {
	t.Helper()
	name := f.Names()[0]
	help := cli.FlagStringer(f)
	if m := helpDefault.FindStringSubmatch(help); m != nil {
		if want := "`" + strings.Trim(m[1], `"`) + "`"; !strings.HasPrefix(def, want) {
			t.Errorf("README.md: --%s's default is %q; --help says %s", name, def, m[0])
		}
	} else if !slices.Contains([]string{"(none)", "(empty)", "(not checked)", "`false`"}, def) && !strings.HasPrefix(def, "off") {
		t.Errorf("README.md: --%s's default is %q; --help shows none (a bool flag that is on must show it)", name, def)
	}
	usage := f.(cli.DocGenerationFlag).GetUsage()
	if strings.Contains(usage, "HBGRAPH_") {
		t.Errorf("--%s's help names a variable; --help adds its own: %q", name, usage)
	}
	if meaning == "" {
		return
	}
	named := func(s string) []string {
		var out []string
		for _, n := range flagsNamed.FindAllString(s, -1) {
			if n != "--"+name && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	if h, m := named(usage), named(meaning); !slices.Equal(h, m) && len(h) > 0 {
		t.Errorf("--%s: the help names %v, the README %v", name, h, m)
	}
}

// TestCORSHeadersHelp: the headers --cors-headers' help and the README say
// a page may always send are those a preflight is allowed, and no others.
func TestCORSHeadersHelp(t *testing.T) {
	var cfg config
	root := newCommand(&cfg, func(*cli.Command, string) error { return nil })
	var usage string
	for _, f := range root.Flags {
		if f.Names()[0] == "cors-headers" {
			usage = f.(cli.DocGenerationFlag).GetUsage()
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `--cors-headers` .*$").FindString(string(readme))
	list := func(s string) []string {
		_, after, _ := strings.Cut(s, "beyond ")
		out := regexp.MustCompile(`[A-Z][A-Za-z]*(-[A-Z][A-Za-z]*)*`).FindAllString(after, -1)
		slices.Sort(out)
		return out
	}
	help, doc := list(usage), list(row)
	if !slices.Equal(help, doc) || len(help) == 0 {
		t.Fatalf("--cors-headers: the help lists %v, the README %v", help, doc)
	}
	cfg.cors = corsFlags{origins: "https://app.example.com"}
	if err := cfg.cors.validate(); err != nil {
		t.Fatal(err)
	}
	h := cfg.cors.parsed.Handler(http.NotFoundHandler())
	allowed := func(header string) bool {
		r := httptest.NewRequest(http.MethodOptions, "/query", nil)
		r.Header.Set("Origin", "https://app.example.com")
		r.Header.Set("Access-Control-Request-Method", http.MethodPost)
		r.Header.Set("Access-Control-Request-Headers", strings.ToLower(header)) // as browsers send it
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Header().Get("Access-Control-Allow-Origin") != ""
	}
	for _, header := range help {
		if !allowed(header) {
			t.Errorf("--cors-headers' help says %s is always allowed; a preflight for it is refused", header)
		}
	}
	for _, header := range []string{"X-Other", "Cookie", "Apollo-Require-Preflight"} {
		if allowed(header) && !slices.Contains(help, header) {
			t.Errorf("a preflight for %s is allowed; --cors-headers' help does not list it", header)
		}
	}
}
