package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/airlock-dev/airlock"
)

// The web inbox in a real headless Chromium, driven by chromedp, against
// the real Main: sign-in, live updates without reload in two independent
// browsers, approving and rejecting through the forms, hostile arguments,
// and the live list's latency against the API's own event stream.
//
// Chromium is found as $AIRLOCK_CHROMIUM, else chromium or chromium-browser
// on PATH. Without it the tests skip, or fail under CI=true. Screenshots go
// to $AIRLOCK_BROWSER_ARTIFACTS/<test> when it is set (.ci/run sets it and
// prints it), else to t.ArtifactDir(): kept with -artifacts, removed
// otherwise.

const (
	// browserBudget bounds each browser test, so that a stuck page fails
	// the test rather than hang it.
	browserBudget = 50 * time.Second
	// stepTimeout bounds one step: a navigation, a wait for the DOM.
	stepTimeout = 15 * time.Second
	// latencyRuns is how many requests the latency test times.
	latencyRuns = 20
)

// chromium returns the browser's path, or skips the test when there is
// none or under -short. Under CI=true a missing browser fails the test,
// -short or not, as does an AIRLOCK_CHROMIUM that names none.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := findChromium()
	switch {
	case err != nil && (os.Getenv("CI") == "true" || os.Getenv("AIRLOCK_CHROMIUM") != ""):
		t.Fatal(err)
	case err != nil:
		t.Skip(err)
	case testing.Short():
		t.Skip("a browser test: -short skips it")
	}
	return path
}

// findChromium returns $AIRLOCK_CHROMIUM, else chromium or
// chromium-browser on PATH.
func findChromium() (string, error) {
	if p := os.Getenv("AIRLOCK_CHROMIUM"); p != "" {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("AIRLOCK_CHROMIUM=%s: %w", p, err)
		}
		return found, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium or chromium-browser on PATH: install it (apt-get install -y chromium) or set AIRLOCK_CHROMIUM")
}

// browserE2E is the e2e server with a headless Chromium beside it.
type browserE2E struct {
	*e2e
	// ctx bounds the whole test: the browser and every step.
	ctx context.Context
	// browser is the context of the browser process; tabs are its
	// children.
	browser context.Context
	// artifacts is where the screenshots go.
	artifacts string
}

func newBrowserE2E(t *testing.T) *browserE2E {
	t.Helper()
	path := chromium(t)
	return newBrowserFor(t, path, newE2E(t))
}

// newBrowserFor starts the Chromium at path beside the server e.
func newBrowserFor(t *testing.T, path string, e *e2e) *browserE2E {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), browserBudget)
	t.Cleanup(cancel)
	// The flags that the machines of this project need: no sandbox (as
	// root), no GPU, and no background connections (the network is
	// closed).
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	// Start the browser with the test's context, not a step's: the first
	// Do binds the process's life to the context it is given.
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return &browserE2E{e2e: e, ctx: ctx, browser: browser, artifacts: artifactDir(t)}
}

// artifactDir is the folder for the test's screenshots; the test logs it.
func artifactDir(t *testing.T) string {
	t.Helper()
	if base := os.Getenv("AIRLOCK_BROWSER_ARTIFACTS"); base != "" {
		dir := filepath.Join(base, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshots in %s", dir)
		return dir
	}
	dir := t.ArtifactDir()
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		t.Logf("screenshots in %s", dir)
	} else {
		t.Logf("screenshots in %s (removed after the test: keep them with -artifacts or AIRLOCK_BROWSER_ARTIFACTS=dir)", dir)
	}
	return dir
}

// tab is one person's page in a browser context of its own (its own
// cookies): two tabs are two independent reviewers.
type tab struct {
	name string
	ctx  context.Context

	mu         sync.Mutex
	dialogs    []string // JavaScript dialogs that opened
	exceptions []string // uncaught exceptions and CSP violations
}

// newTab opens a tab in a new browser context. It watches, for the whole
// test, for JavaScript dialogs (answering them, so that the page does not
// hang) and for exceptions; the test fails at its end if there were any.
func (b *browserE2E) newTab(t *testing.T, name string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab, bound to the test
		t.Fatalf("%s: open a tab: %v", name, err)
	}
	tb := &tab{name: name, ctx: ctx}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recorderJS}); err != nil {
		t.Fatalf("%s: install the recorder: %v", name, err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	console := chromedp.Console(ctx)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, fmt.Sprintf("%s %q at %s", ev.Type, ev.Message, ev.URL))
			tb.mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				tb.mu.Lock()
				tb.exceptions = append(tb.exceptions, m.String())
				tb.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, d := range tb.dialogs {
			t.Errorf("%s: a JavaScript dialog opened: %s", name, d)
		}
		for _, x := range tb.exceptions {
			t.Errorf("%s: the page reported: %s", name, x)
		}
	})
	return tb
}

// step runs actions with a step's timeout.
func (tb *tab) step(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %s: %v", tb.name, what, err)
	}
}

// follow runs an action that navigates (a click on a link or a submit
// button) and waits until the page it lands on, after redirects, has
// loaded; it returns that page's path.
func (tb *tab) follow(t *testing.T, what string, action chromedp.Action[chromedp.Void]) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, action)
	if err != nil {
		t.Fatalf("%s: %s: %v", tb.name, what, err)
	}
	if resp.Status != 200 {
		t.Fatalf("%s: %s: landed on %s with status %d", tb.name, what, resp.URL, resp.Status)
	}
	return eval[string](t, tb, "location.pathname")
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: evaluate %s: %v", tb.name, clip(expr), err)
	}
	return v
}

// waitFor waits until expr is true in the page, re-evaluating it on every
// DOM mutation.
func (tb *tab) waitFor(t *testing.T, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")",
		chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(stepTimeout)))
	if err != nil {
		t.Fatalf("%s: waiting until %s: %v", tb.name, what, err)
	}
}

// screenshot saves a full-page PNG of the tab as name.png.
func (b *browserE2E) screenshot(t *testing.T, tb *tab, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot %s: %v", tb.name, name, err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("%s: screenshot %s is not a PNG", tb.name, name)
	}
	if err := os.WriteFile(filepath.Join(b.artifacts, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// signIn signs in through the form and lands on the inbox, then marks the
// page (see live) so that a reload would be seen.
func (b *browserE2E) signIn(t *testing.T, tb *tab, secret string) {
	t.Helper()
	tb.step(t, "open the sign-in page",
		chromedp.Navigate(b.url+"/inbox/signin"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), secret),
	)
	if got := tb.follow(t, "sign in", chromedp.Click(chromedp.CSS(`form[action="/inbox/signin"] button[type=submit]`))); got != "/inbox" {
		t.Fatalf("%s: signing in landed on %s, want /inbox", tb.name, got)
	}
	tb.live(t)
}

// recorderJS runs in every document the tab loads, before the page's own
// scripts. It records when each request's row first appears in #list and
// when the page's event stream first names it (milliseconds since the
// epoch, by the page's clock), and marks <html> data-airlock-test-sse
// when the stream opens or fails, so that a mutation-driven wait sees it.
// DevTools injects it, so the inbox's CSP (script-src 'self') allows it.
const recorderJS = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const w = window.airlockTest = {rows: {}, sse: {}};
  const mark = state => document.documentElement.setAttribute("data-airlock-test-sse", state);
  document.addEventListener("htmx:sseOpen", () => mark("open"), true);
  document.addEventListener("htmx:sseError", () => mark("error"), true);
  // The event that makes #list re-fetch, seen before htmx handles it.
  document.addEventListener("sse:approval", e => {
    const id = e.detail && e.detail.data;
    if (id && !(id in w.sse)) w.sse[id] = now();
  }, true);
  document.addEventListener("DOMContentLoaded", () => {
    const list = document.getElementById("list");
    if (!list) return;
    const prefix = "/inbox/approvals/";
    const scan = () => {
      const t = now();
      for (const a of list.querySelectorAll("a.row-link")) {
        const id = a.getAttribute("href").slice(prefix.length);
        if (!(id in w.rows)) w.rows[id] = t;
      }
    };
    scan();
    new MutationObserver(scan).observe(list, {childList: true, subtree: true});
  });
})()`

// live waits until the open inbox's event stream is connected, and marks
// the page: the mark is gone if the page is reloaded (notReloaded).
func (tb *tab) live(t *testing.T) {
	t.Helper()
	tb.waitFor(t, "the inbox's event stream is open",
		`document.documentElement.getAttribute("data-airlock-test-sse") === "open"`)
	eval[bool](t, tb, `window.airlockMark = true`)
}

// notReloaded fails the test if the page was reloaded since live.
func (tb *tab) notReloaded(t *testing.T) {
	t.Helper()
	if !eval[bool](t, tb, `window.airlockMark === true`) {
		t.Fatalf("%s: the page was reloaded: the live list must update without a reload", tb.name)
	}
}

func rowSelector(id string) string {
	return fmt.Sprintf(`a.row-link[href="/inbox/approvals/%s"]`, id)
}

func rowPresent(id string) string {
	return fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(rowSelector(id)))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// asked is an agent's check blocked on a person.
type asked struct {
	id   string    // the request it queued
	sent time.Time // when the check was sent
	done <-chan airlock.Enforcement
}

// ask sends the agent's check, which blocks (the Go client's Enforce) until
// the request is settled or the test ends, and returns once the server
// has queued the request.
func (e *e2e) ask(t *testing.T, a airlock.Action) asked {
	t.Helper()
	queued := make(chan string, 1)
	done := make(chan airlock.Enforcement, 1)
	c := e.client(e.agent)
	c.Pending = func(enf airlock.Enforcement) {
		select {
		case queued <- enf.Approval.ID:
		default: // called again on every long poll
		}
	}
	sent := time.Now()
	go func() { done <- c.Enforce(t.Context(), a) }()
	select {
	case id := <-queued:
		return asked{id: id, sent: sent, done: done}
	case enf := <-done:
		t.Fatalf("%s: the check did not wait: %+v", a.Tool, enf)
	case <-time.After(stepTimeout):
		t.Fatalf("%s: the check queued no request", a.Tool)
	}
	return asked{}
}

// TestBrowserInbox is a reviewer's session in a real browser: sign in,
// see requests arrive and leave live in two independent browsers, approve
// and reject through the forms, and the agent's blocked checks answer.
func TestBrowserInbox(t *testing.T) {
	b := newBrowserE2E(t)
	// Two people, two browser contexts: bob (a reviewer the rule names)
	// and the admin, each signed in through the form.
	bob, admin := b.newTab(t, "bob's browser"), b.newTab(t, "the admin's browser")
	b.signIn(t, bob, b.bob)
	b.signIn(t, admin, b.admin)
	if who := eval[string](t, bob, `document.querySelector(".who").textContent`); !strings.Contains(who, "bob") {
		t.Errorf("bob's inbox names %q as signed in", who)
	}

	// A check blocks; its request appears in both open inboxes, live.
	first := b.ask(t, action("deploy", "prod"))
	for _, tb := range []*tab{bob, admin} {
		tb.waitFor(t, "the new request's row appears", rowPresent(first.id))
		tb.notReloaded(t)
	}
	b.screenshot(t, bob, "1-inbox-bob")
	b.screenshot(t, admin, "1-inbox-admin")

	// Bob opens it and approves it through the form.
	path := bob.follow(t, "open the request", chromedp.Click(chromedp.CSS(rowSelector(first.id))))
	if want := "/inbox/approvals/" + first.id; path != want {
		t.Fatalf("the row led to %s, want %s", path, want)
	}
	approve := fmt.Sprintf(`form[action="/inbox/approvals/%s/approve"]`, first.id)
	ap, err := b.client(b.bob).Approval(t.Context(), first.id)
	if err != nil {
		t.Fatal(err)
	}
	shown := eval[string](t, bob, fmt.Sprintf(`document.querySelector(%s).value`, jsString(approve+` input[name="action_hash"]`)))
	if shown != ap.ActionHash.String() {
		t.Fatalf("the approve form carries action_hash %q, want %q", shown, ap.ActionHash)
	}
	b.screenshot(t, bob, "2-detail-pending")
	if got := bob.follow(t, "approve", chromedp.Click(chromedp.CSS(approve+` button[type=submit]`))); got != "/inbox" {
		t.Errorf("approving landed on %s, want /inbox", got)
	}
	enf := receive(t, first.done)
	if !enf.Allowed || enf.Approval == nil || enf.Approval.ResolvedBy != "bob" || enf.Approval.Surface != airlock.SurfaceWeb {
		t.Fatalf("the blocked check after the approval: %+v, want allowed, by bob, via web", enf)
	}
	// The admin's inbox drops the row by itself.
	admin.waitFor(t, "the approved request's row leaves", "!("+rowPresent(first.id)+")")
	admin.notReloaded(t)

	// Another check; bob rejects it with a reason.
	bob.live(t) // bob is on a freshly loaded inbox since approving
	second := b.ask(t, action("deploy", "staging"))
	for _, tb := range []*tab{bob, admin} {
		tb.waitFor(t, "the second request's row appears", rowPresent(second.id))
		tb.notReloaded(t)
	}
	bob.follow(t, "open the second request", chromedp.Click(chromedp.CSS(rowSelector(second.id))))
	const reason = "not on a Friday — release freeze & no rollback plan"
	reject := fmt.Sprintf(`form[action="/inbox/approvals/%s/reject"]`, second.id)
	bob.step(t, "write the rejection's reason", chromedp.SendKeys(chromedp.ID("reject-reason"), reason))
	if got := bob.follow(t, "reject", chromedp.Click(chromedp.CSS(reject+` button[type=submit]`))); got != "/inbox" {
		t.Errorf("rejecting landed on %s, want /inbox", got)
	}
	enf = receive(t, second.done)
	if enf.Allowed || enf.Code != airlock.CodeRejected || !strings.Contains(enf.Message, reason) {
		t.Fatalf("the blocked check after the rejection: %+v, want %s with the reason", enf, airlock.CodeRejected)
	}
	admin.waitFor(t, "the rejected request's row leaves", "!("+rowPresent(second.id)+")")
	admin.notReloaded(t)

	// The request's page says who rejected it and why.
	bob.step(t, "open the rejected request", chromedp.Navigate(b.url+"/inbox/approvals/"+second.id))
	text := eval[string](t, bob, `document.getElementById("main").innerText`)
	for _, want := range []string{"rejected", "bob", reason} {
		if !strings.Contains(text, want) {
			t.Errorf("the rejected request's page does not say %q:\n%s", want, text)
		}
	}
	b.screenshot(t, bob, "3-detail-rejected")
}

// TestBrowserHostileArgs queues a request whose arguments try to run
// script, hide characters and drown the page, and checks that the browser
// shows them as text: no dialog, no injected element, hidden characters
// as visible escapes, and every byte of a 1 MiB argument in the page.
func TestBrowserHostileArgs(t *testing.T) {
	b := newBrowserE2E(t)
	bob := b.newTab(t, "bob's browser")
	b.signIn(t, bob, b.bob)
	layoutScripts := eval[int](t, bob, `document.scripts.length`)

	const (
		script = `<script>alert(1)</script>`
		img    = `<img src=x onerror=alert(1)>`
		// The pattern of the large argument, between markers, so that
		// the page's copy can be checked whole.
		unit = "0123456789abcdef"
	)
	big := "<<" + strings.Repeat(unit, (1<<20)/len(unit)) + ">>"
	args := map[string]any{
		"command":   script + " " + img + " invoice\u202Efdp.exe",
		"note":      img,
		"bidi":      "approve\u202E  reject",
		"zero":      "pay\u200Bpal\u200C.com\u200D\uFEFF",
		"z_payload": big,
	}
	enf := b.client(b.agent).Enforce(t.Context(),
		airlock.Action{Agent: "coder-1", Tool: "propose", Args: airlock.MustArgs(args)})
	if enf.Code != airlock.CodeSuggested || enf.Approval == nil {
		t.Fatalf("the hostile proposal: %+v, want %s with a request", enf, airlock.CodeSuggested)
	}
	id := enf.Approval.ID

	// It arrives in the open inbox through the live list.
	bob.waitFor(t, "the hostile request's row appears", rowPresent(id))
	bob.notReloaded(t)
	checkInert(t, bob, layoutScripts)
	marks := hiddenMarks(t, bob, "#list")
	if !slices.Contains(marks, `\u202e`) {
		t.Errorf("the row shows the hidden characters as %q, want \\u202e among them", marks)
	}
	b.screenshot(t, bob, "1-inbox-hostile")

	bob.follow(t, "open the hostile request", chromedp.Click(chromedp.CSS(rowSelector(id))))
	checkInert(t, bob, layoutScripts)
	if !eval[bool](t, bob, fmt.Sprintf(`document.getElementById("main").textContent.includes(%s)`, jsString(script))) {
		t.Errorf("the page does not show %s as text", script)
	}
	marks = hiddenMarks(t, bob, "#main")
	for _, want := range []string{`\u202e`, `\u200b`, `\u200c`, `\u200d`, `\ufeff`} {
		if !slices.Contains(marks, want) {
			t.Errorf("the page shows the hidden characters as %q, want %s among them", marks, want)
		}
	}
	if eval[bool](t, bob, `/[\u200b-\u200d\u202a-\u202e\u2066-\u2069\ufeff]/.test(document.body.textContent)`) {
		t.Error("the page holds a raw bidi or zero-width character")
	}

	// The 1 MiB argument: collapsed in a <details>, every byte there.
	type bigArgs struct {
		InDetails bool `json:"inDetails"`
		Open      bool `json:"open"`
		Length    int  `json:"length"`
		Whole     bool `json:"whole"`
	}
	got := eval[bigArgs](t, bob, fmt.Sprintf(`(() => {
  const pre = [...document.querySelectorAll("pre.args")].find(p => p.textContent.includes("<<%[1]s"));
  if (!pre) return {inDetails: false, open: false, length: -1, whole: false};
  const text = pre.textContent, i = text.indexOf("<<%[1]s") + 2, j = text.indexOf(">>", i);
  const details = pre.closest("details");
  return {inDetails: details !== null, open: details !== null && details.open,
    length: j - i, whole: /^(%[1]s)+$/.test(text.slice(i, j))};
})()`, unit))
	if want := len(big) - 4; got.Length != want || !got.Whole {
		t.Errorf("the large argument in the page: %d bytes, whole pattern %v; want all %d bytes", got.Length, got.Whole, want)
	}
	if !got.InDetails || got.Open {
		t.Errorf("the large argument: in a <details> %v, open %v; want collapsed in one", got.InDetails, got.Open)
	}
	b.screenshot(t, bob, "2-detail-hostile")
}

// TestBrowserReviewerKeys clears a queue from the keyboard, watches the
// countdowns run, sees a request's whole page turn when someone settles it
// elsewhere, and sees an open inbox say so when its session ends.
func TestBrowserReviewerKeys(t *testing.T) {
	b := newBrowserE2E(t)
	bob := b.newTab(t, "bob's browser")
	b.signIn(t, bob, b.bob)
	older := b.ask(t, action("deploy", "older"))
	newer := b.ask(t, action("deploy", "newer"))
	bob.waitFor(t, "both rows appear", rowPresent(older.id)+" && "+rowPresent(newer.id))

	// The countdown runs in the page, without a reload.
	shown := eval[string](t, bob, `document.querySelector("#list time[data-countdown]").textContent`)
	bob.waitFor(t, "the countdown moves", fmt.Sprintf(`document.querySelector("#list time[data-countdown]").textContent !== %s`, jsString(shown)))
	bob.notReloaded(t)

	// j and k move through the list (newest first), Enter opens a request.
	active := `document.activeElement.getAttribute("href")`
	for _, k := range []struct{ key, want string }{{"j", newer.id}, {"j", older.id}, {"k", newer.id}} {
		bob.step(t, "press "+k.key, press(k.key))
		if got := eval[string](t, bob, active); got != "/inbox/approvals/"+k.want {
			t.Fatalf("after %s the focus is on %q, want the row of %s", k.key, got, k.want)
		}
	}
	if got := bob.follow(t, "press Enter", press(kb.Enter)); got != "/inbox/approvals/"+newer.id {
		t.Fatalf("Enter opened %s, want the newer request", got)
	}

	// On a request: a moves to Approve without approving; r to the reason,
	// where keys type; Escape leaves the field, and leaves the page only
	// when no reason is written.
	bob.step(t, "press a", press("a"))
	if got := eval[string](t, bob, `document.activeElement.type + " " + document.activeElement.form.getAttribute("action")`); got != "submit /inbox/approvals/"+newer.id+"/approve" {
		t.Fatalf("a moved the focus to %q, want the Approve button", got)
	}
	if st := b.status(t, newer.id); st != airlock.StatusPending {
		t.Fatalf("pressing a left the request %s, want it pending", st)
	}
	bob.step(t, "press r and type", press("r"), press("jan"))
	if got := eval[string](t, bob, `document.activeElement.id + "=" + document.activeElement.value`); got != "reject-reason=jan" {
		t.Fatalf("after r and typing: %q, want the reject reason holding what was typed", got)
	}
	bob.step(t, "press Escape twice", press(kb.Escape), press(kb.Escape))
	if got := eval[string](t, bob, "location.pathname"); got != "/inbox/approvals/"+newer.id {
		t.Fatalf("Escape with a reason written went to %s", got)
	}
	eval[string](t, bob, `document.getElementById("reject-reason").value = ""`)
	if got := bob.follow(t, "press Escape", press(kb.Escape)); got != "/inbox" {
		t.Fatalf("Escape went to %s, want the inbox", got)
	}
	// n opens the most urgent request bob may decide: the older one.
	if got := bob.follow(t, "press n", press("n")); got != "/inbox/approvals/"+older.id {
		t.Fatalf("n opened %s, want the older request (the first deadline)", got)
	}
	bob.step(t, "press ?", press("?"))
	if !eval[bool](t, bob, `document.getElementById("shortcuts").open`) {
		t.Fatal("? did not open the shortcuts")
	}
	bob.step(t, "close them", press(kb.Escape))

	// Settled from the CLI while bob reads it: the status, the decision
	// region and the audit events all say so, and nothing counts down.
	bob.live(t)
	ap, err := b.client(b.admin).Approval(t.Context(), older.id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client(b.admin).Resolve(t.Context(), older.id, airlock.StatusRejected, ap.ActionHash, "not today", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	bob.waitFor(t, "the page shows the rejection", `document.getElementById("status").textContent.includes("rejected")`)
	bob.notReloaded(t)
	type whole struct {
		Status    string `json:"status"`
		Decide    string `json:"decide"`
		Ticking   int    `json:"ticking"`
		Forms     int    `json:"forms"`
		Resolved  bool   `json:"resolved"`
		Announced string `json:"announced"`
	}
	got := eval[whole](t, bob, `({
  status: document.getElementById("status").textContent,
  decide: document.querySelector("#decide h2").textContent,
  ticking: document.querySelectorAll("#main time[data-countdown], #main time[data-since]").length,
  forms: document.querySelectorAll('#decide form').length,
  resolved: [...document.querySelectorAll("#timeline li")].some(li => li.textContent.includes("approval.resolved")),
  announced: document.getElementById("live-note").textContent,
})`)
	if !strings.Contains(got.Status, "admin via cli") || !strings.Contains(got.Status, "not today") || got.Decide != "Settled: rejected" ||
		got.Ticking != 0 || got.Forms != 0 || !got.Resolved || !strings.Contains(got.Announced, "rejected") {
		t.Fatalf("the request's page after a rejection from the CLI: %+v", got)
	}
	b.screenshot(t, bob, "1-detail-settled-elsewhere")

	// Signed out in another tab of the same browser: the open inbox says
	// so and stops trying.
	bob.step(t, "open the inbox", chromedp.Navigate(b.url+"/inbox"))
	bob.live(t)
	ctx, cancel := context.WithTimeout(bob.ctx, stepTimeout)
	defer cancel()
	if st, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/inbox/signout", {method: "POST"}).then(r => r.status)`, chromedp.EvalAwaitPromise)); err != nil || st != 200 {
		t.Fatalf("sign out from the page: %d %v", st, err)
	}
	bob.waitFor(t, "the page says it is signed out", `!document.getElementById("conn").hidden && document.getElementById("conn").textContent.includes("signed out")`)
	if eval[bool](t, bob, `document.querySelector("[sse-connect]") !== null`) {
		t.Error("the signed-out page keeps reconnecting its stream")
	}
	b.screenshot(t, bob, "2-inbox-signed-out")
}

// TestBrowserIdenticalSettledElsewhere: a reviewer writing a reason on a
// request whose identical siblings are settled from the API keeps what
// they wrote and where they were; and when the request itself is settled
// right after a sibling, while the page re-fetches, the page says so.
func TestBrowserIdenticalSettledElsewhere(t *testing.T) {
	b := newBrowserE2E(t)
	bob := b.newTab(t, "bob's browser")
	b.signIn(t, bob, b.bob)
	write := func(session string) asked {
		return b.ask(t, airlock.Action{Agent: "coder-1", Tool: "write_file", SessionID: session,
			Args: airlock.MustArgs(map[string]any{"path": "notes.txt", "content": "hello"})})
	}
	req, first, second := write("s1"), write("s2"), write("s3")
	bob.step(t, "open the request", chromedp.Navigate(b.url+"/inbox/approvals/"+req.id))
	bob.live(t)
	bob.waitFor(t, "two identical requests are offered", `document.getElementById("h-batch").textContent.startsWith("2 more")`)
	bob.step(t, "write a reason", press("r"), press("half a reason"))

	admin := b.client(b.admin)
	resolve := func(a asked, st airlock.ApprovalStatus, reason string) {
		t.Helper()
		ap, err := admin.Approval(t.Context(), a.id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Resolve(t.Context(), a.id, st, ap.ActionHash, reason, airlock.SurfaceAPI); err != nil {
			t.Fatal(err)
		}
	}
	resolve(first, airlock.StatusApproved, "")
	bob.waitFor(t, "the batch shrinks", `document.getElementById("h-batch").textContent.startsWith("1 more")`)
	if got := eval[string](t, bob, `document.activeElement.id + "=" + document.activeElement.value`); got != "reject-reason=half a reason" {
		t.Fatalf("after an identical request was settled elsewhere: %q, want the reason still written and focused", got)
	}
	if eval[string](t, bob, `document.getElementById("live-note").textContent`) != "" {
		t.Error("a change to another request was announced as this one's")
	}

	// Back to back: the second event comes while the first re-fetch is
	// under way.
	resolve(second, airlock.StatusApproved, "")
	resolve(req, airlock.StatusRejected, "not twice")
	bob.waitFor(t, "the page shows the rejection", `document.getElementById("status").textContent.includes("rejected")`)
	if got := eval[string](t, bob, `document.querySelector("#decide h2").textContent`); got != "Settled: rejected" {
		t.Fatalf("the decision region reads %q after the request was rejected", got)
	}
	bob.notReloaded(t)
}

// press types keys as a keyboard does: each a keyDown that carries its
// text, then a keyUp, so that a page that prevents the keydown also
// prevents the character. (chromedp's KeyEvent sends the character as an
// event of its own, which no keydown handler can prevent.)
func press(keys string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range keys {
			var down *input.DispatchKeyEventParams
			for _, k := range kb.Encode(r) {
				switch k.Type {
				case kb.KeyDown:
					down = k
					continue
				case kb.KeyChar:
					down.Text, down.UnmodifiedText = k.Text, k.UnmodifiedText
					continue
				case kb.KeyUp:
					if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *down); err != nil {
						return err
					}
				}
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// status returns a request's status as the API tells it.
func (e *e2e) status(t *testing.T, id string) airlock.ApprovalStatus {
	t.Helper()
	ap, err := e.client(e.admin).Approval(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ap.Status
}

// TestBrowserPhone opens the inbox and a request on a phone-sized touch
// screen: nothing is wider than the screen, the filters start folded, the
// keyboard hints are gone, and the buttons are big enough for a finger.
func TestBrowserPhone(t *testing.T) {
	b := newBrowserE2E(t)
	phone := b.newTab(t, "bob's phone")
	phone.step(t, "a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.signIn(t, phone, b.bob)
	// A long name without a break, which must wrap, not widen the page.
	long := airlock.Action{Agent: "coder-1", Tool: "deploy", Args: airlock.MustArgs(map[string]any{
		"target": strings.Repeat("averyveryverylongservicename", 8), "note": "approve‮ later"})}
	req := b.ask(t, long)
	phone.waitFor(t, "the row appears", rowPresent(req.id))

	type fit struct {
		Scroll  int  `json:"scroll"`
		Client  int  `json:"client"`
		Folded  bool `json:"folded"`
		Hints   bool `json:"hints"`
		Smaller []string
	}
	measure := `({
  scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
  folded: document.getElementById("filters") ? !document.getElementById("filters").open : true,
  hints: [...document.querySelectorAll(".keys, .foot")].some(e => e.offsetParent !== null),
  smaller: [...document.querySelectorAll("main button, .top button, .top nav a")]
    .filter(e => e.offsetParent !== null && e.getBoundingClientRect().height < 44)
    .map(e => e.textContent.trim()),
})`
	check := func(page string) {
		t.Helper()
		got := eval[fit](t, phone, measure)
		if got.Scroll > got.Client {
			t.Errorf("%s: the page is %d px wide on a %d px screen", page, got.Scroll, got.Client)
		}
		if got.Hints {
			t.Errorf("%s: keyboard hints shown on a touch screen", page)
		}
		if len(got.Smaller) > 0 {
			t.Errorf("%s: targets under 44 px: %q", page, got.Smaller)
		}
		if !got.Folded {
			t.Errorf("%s: the filters start open on a phone", page)
		}
	}
	check("the inbox")
	b.screenshot(t, phone, "1-phone-inbox")
	phone.follow(t, "open the request", chromedp.Click(chromedp.CSS(rowSelector(req.id))))
	check("the request")
	b.screenshot(t, phone, "2-phone-detail")
}

// checkInert fails if hostile text became markup: an element it names, an
// inline handler, or a script the layout does not have.
func checkInert(t *testing.T, tb *tab, layoutScripts int) {
	t.Helper()
	type inert struct {
		Injected int      `json:"injected"`
		Handlers []string `json:"handlers"`
		Scripts  []string `json:"scripts"`
	}
	got := eval[inert](t, tb, `(() => ({
  injected: document.querySelectorAll('img[src="x"], img[onerror], script:not([src])').length,
  handlers: [...document.querySelectorAll("*")].flatMap(e => [...e.attributes].filter(a => a.name.startsWith("on")).map(a => e.tagName + " " + a.name)),
  scripts: [...document.scripts].map(s => s.getAttribute("src") || "(inline)"),
}))()`)
	if got.Injected != 0 || len(got.Handlers) != 0 {
		t.Errorf("%s: hostile text became markup: %d injected elements, handlers %q", tb.name, got.Injected, got.Handlers)
	}
	if len(got.Scripts) != layoutScripts {
		t.Errorf("%s: %d scripts %q, want the layout's %d", tb.name, len(got.Scripts), got.Scripts, layoutScripts)
	}
	for _, src := range got.Scripts {
		if !strings.HasPrefix(src, "/inbox/assets/") {
			t.Errorf("%s: a script from %s", tb.name, src)
		}
	}
}

// hiddenMarks returns the escapes shown for hidden characters under root,
// split into single escapes.
func hiddenMarks(t *testing.T, tb *tab, root string) []string {
	t.Helper()
	texts := eval[[]string](t, tb, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(e => e.textContent)`, jsString(root+" .hidden-char")))
	var marks []string
	for _, s := range texts {
		for part := range strings.SplitSeq(s, `\`) {
			if part != "" {
				marks = append(marks, `\`+part)
			}
		}
	}
	return marks
}

// TestBrowserLiveLatency times, over latencyRuns requests, how long a new
// request takes to appear in an open inbox (the row inserted in #list),
// against the API's own event stream delivering the same request to a Go
// client, from two anchors: the agent's check sent, and the time the store
// gave the approval.requested event. It reports the figures
// (docs/BENCHMARKS.md) and asserts none.
func TestBrowserLiveLatency(t *testing.T) {
	b := newBrowserE2E(t)
	bob := b.newTab(t, "bob's browser")
	b.signIn(t, bob, b.bob)

	// The API's stream, to a Go client: when it delivers each request.
	type arrival struct {
		ev airlock.Event
		at time.Time
	}
	streamed := make(chan arrival, 4*latencyRuns)
	stopped := make(chan error, 1)
	ctx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	// startStream pins the stream at the log's head before it returns: a
	// stream left to find "now" itself (after 0) could start after the
	// next request's event and never deliver it.
	startStream := func() {
		t.Helper()
		page, err := b.client(b.bob).Events(ctx, airlock.EventFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if page.Head == 0 {
			t.Fatal("the audit log is empty: no head to pin the stream at")
		}
		wg.Go(func() {
			stopped <- b.client(b.bob).StreamEvents(ctx, page.Head, airlock.EventApprovalRequested, "", func(ev airlock.Event) error {
				streamed <- arrival{ev, time.Now()}
				return nil
			})
		})
	}
	viaStream := func(id string) arrival {
		t.Helper()
		timeout := time.After(stepTimeout)
		for {
			select {
			case a := <-streamed:
				if a.ev.ApprovalID == id {
					return a
				}
			case err := <-stopped:
				t.Fatalf("the API's event stream stopped: %v", err)
			case <-timeout:
				t.Fatalf("the API's event stream did not deliver request %s", id)
			}
		}
	}
	// inPage reads a time the page recorded (milliseconds since the epoch,
	// the same clock as Go's on this machine).
	inPage := func(expr string) time.Time {
		t.Helper()
		return time.UnixMicro(int64(math.Round(eval[float64](t, bob, expr) * 1000)))
	}

	// The list's re-fetch that brought the row, from Resource Timing.
	type fetchTiming struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
	}
	const lastFetch = `(() => {
  const e = performance.getEntriesByType("resource").filter(e => e.name.includes("/inbox/list")).at(-1);
  return e ? {start: performance.timeOrigin + e.startTime, end: performance.timeOrigin + e.responseEnd} : {start: 0, end: 0};
})()`
	ms := func(v float64) time.Time { return time.UnixMicro(int64(math.Round(v * 1000))) }
	var fromCheck, fromEvent struct{ dom, pageSSE, api []time.Duration }
	var toFetch, fetching, toRow []time.Duration // the page's stages
	// Two warm-ups: the first opens the page's connections and fetch and
	// gives the log a head to pin the API stream at; the second, the API
	// stream's connection.
	const warmUps = 2
	for i := range warmUps + latencyRuns {
		if i == 1 {
			startStream()
		}
		q := b.ask(t, action("deploy", fmt.Sprintf("latency-%02d", i)))
		var api arrival
		if i > 0 {
			api = viaStream(q.id)
		}
		bob.waitFor(t, "the row appears", rowPresent(q.id))
		rowAt := inPage(fmt.Sprintf(`window.airlockTest.rows[%s]`, jsString(q.id)))
		// 0 if the row came with an earlier event's fetch.
		sseAt := inPage(fmt.Sprintf(`window.airlockTest.sse[%s] || 0`, jsString(q.id)))
		fetch := eval[fetchTiming](t, bob, lastFetch)
		if i < warmUps {
			continue
		}
		if start, end := ms(fetch.Start), ms(fetch.End); sseAt.UnixMicro() > 0 && !start.Before(sseAt) && !end.After(rowAt) {
			toFetch = append(toFetch, start.Sub(sseAt))
			fetching = append(fetching, end.Sub(start))
			toRow = append(toRow, rowAt.Sub(end))
		}
		for _, m := range []struct {
			from time.Time
			into *struct{ dom, pageSSE, api []time.Duration }
		}{{q.sent, &fromCheck}, {api.ev.Time, &fromEvent}} {
			m.into.dom = append(m.into.dom, rowAt.Sub(m.from))
			if sseAt.UnixMicro() > 0 {
				m.into.pageSSE = append(m.into.pageSSE, sseAt.Sub(m.from))
			}
			m.into.api = append(m.into.api, api.at.Sub(m.from))
		}
	}
	bob.notReloaded(t)
	if n := eval[int](t, bob, `document.querySelectorAll("#list a.row-link").length`); n != warmUps+latencyRuns {
		t.Errorf("the inbox lists %d requests, want %d", n, warmUps+latencyRuns)
	}
	b.screenshot(t, bob, "inbox-after-latency")

	var report strings.Builder
	fmt.Fprintf(&report, "a new request in an open inbox, %d requests, p50 / max:\n", latencyRuns)
	fmt.Fprintf(&report, "%-22s %-17s %-17s %-17s %s\n", "from", "row in the DOM", "page's SSE event", "API stream (Go)", "DOM / API")
	for _, r := range []struct {
		from string
		d    struct{ dom, pageSSE, api []time.Duration }
	}{{"the check sent", fromCheck}, {"the event's time", fromEvent}} {
		fmt.Fprintf(&report, "%-22s %-17s %-17s %-17s %.2f / %.2f\n", r.from,
			spread(r.d.dom), spread(r.d.pageSSE), spread(r.d.api),
			ratio(p50(r.d.dom), p50(r.d.api)), ratio(slices.Max(r.d.dom), slices.Max(r.d.api)))
	}
	fmt.Fprintf(&report, "in the page (%d of %d requests): event -> list fetch sent %s; fetch %s; answer -> row %s\n",
		len(fetching), latencyRuns, spread(toFetch), spread(fetching), spread(toRow))
	t.Log("\n" + report.String())
	if err := os.WriteFile(filepath.Join(b.artifacts, "latency.txt"), []byte(report.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// spread writes the p50 and the max of ds in milliseconds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return fmt.Sprintf("%.1f / %.1f ms", ms(p50(ds)), ms(slices.Max(ds)))
}

// p50 is the nearest-rank median.
func p50(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[(len(s)+1)/2-1]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
