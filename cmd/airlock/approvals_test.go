package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
)

// tableNames returns, in order, the names of td's requests whose IDs start
// the lines of a table.
func tableNames(td *testDB, out string) []string {
	var names []string
	for l := range strings.Lines(out) {
		id, _, _ := strings.Cut(l, " ")
		for name, ap := range td.approvals {
			if ap.ID == id {
				names = append(names, name)
			}
		}
	}
	return names
}

func TestApprovalsList(t *testing.T) {
	td := newTestDB(t)
	deploy := td.approvals["deploy"].ID
	for _, tc := range []struct {
		name string
		args []string
		want []string
		next string // the cursor of the next page, "" for none
	}{
		{"all, newest first", nil, []string{"push", "deploy", "delete"}, ""},
		{"oldest first", []string{"--oldest"}, []string{"delete", "deploy", "push"}, ""},
		{"pending", []string{"--status", "pending"}, []string{"deploy", "delete"}, ""},
		{"comma list", []string{"--status", "approved,rejected"}, []string{"push"}, ""},
		{"repeated", []string{"--status", "approved", "--status", "pending"}, []string{"push", "deploy", "delete"}, ""},
		{"none match", []string{"--status", "expired"}, nil, ""},
		{"agent", []string{"--agent", "alice"}, []string{"push", "delete"}, ""},
		{"class", []string{"--class", "fs.delete"}, []string{"delete"}, ""},
		{"tool", []string{"--tool", "Bash", "--agent", "bob"}, []string{"deploy"}, ""},
		{"risk", []string{"--risk", "network-egress"}, []string{"push", "delete"}, ""},
		{"older than", []string{"--older-than", "2h"}, []string{"deploy", "delete"}, ""},
		{"newer than", []string{"--newer-than", "4h"}, []string{"push", "deploy"}, ""},
		{"first page", []string{"--limit", "2"}, []string{"push", "deploy"}, deploy},
		{"second page", []string{"--limit", "2", "--cursor", deploy}, []string{"delete"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"approvals", "list", "--db", td.path}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got, want := tableNames(td, stdout), tc.want; !slices.Equal(got, want) {
				t.Errorf("listed %v, want %v\n%s", got, want, stdout)
			}
			if len(tc.want) == 0 && !strings.Contains(stdout, "no approval requests match") {
				t.Errorf("an empty listing says %q", stdout)
			}
			hint := "next page: --cursor " + tc.next + "\n"
			if got, want := strings.HasSuffix(stdout, hint), tc.next != ""; got != want {
				t.Errorf("next page hint: %v, want %v\n%s", got, want, stdout)
			}

			code, stdout, stderr = runCLI(t, append([]string{"approvals", "list", "--db", td.path, "--json"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("--json: exit %d: %s", code, stderr)
			}
			var page airlock.ApprovalPage
			if err := json.Unmarshal([]byte(stdout), &page); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			var got []string
			for _, ap := range page.Approvals {
				got = append(got, tableNames(td, ap.ID)...)
			}
			if want := tc.want; !slices.Equal(got, want) {
				t.Errorf("--json listed %v, want %v", got, want)
			}
			if got, want := page.NextCursor, tc.next; got != want {
				t.Errorf("--json next_cursor %q, want %q", got, want)
			}
		})
	}
}

func TestApprovalsListTable(t *testing.T) {
	td := newTestDB(t)
	code, stdout, stderr := runCLI(t, "approvals", "list", "--db", td.path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if got, want := strings.Fields(lines[0]), []string{"ID", "STATUS", "AGE", "AGENT", "TOOL", "CLASS", "RISK", "SUMMARY"}; !slices.Equal(got, want) {
		t.Errorf("header %v, want %v", got, want)
	}
	push := td.approvals["push"]
	if got, want := strings.Fields(lines[1])[:7], []string{push.ID, "approved", "1h", "alice", "Bash", "git.push", "network-egress"}; !slices.Equal(got, want) {
		t.Errorf("row %v, want %v", got, want)
	}
	if got, want := strings.Fields(lines[2])[:7], []string{td.approvals["deploy"].ID, "pending", "3h", "bob", "Bash", "process.exec", "write"}; !slices.Equal(got, want) {
		t.Errorf("row %v, want %v", got, want)
	}
	if strings.Contains(stdout, "END") || !strings.Contains(lines[2], "Bash `make deploy` with a very long") || !strings.HasSuffix(lines[2], "…") {
		t.Errorf("the long summary is not truncated:\n%s", stdout)
	}
}

func TestApprovalsListUsage(t *testing.T) {
	td := newTestDB(t)
	for _, tc := range []struct {
		name     string
		args     []string
		contains string
	}{
		{"bad status", []string{"--status", "pendng"}, `--status: unknown approval status "pendng" (did you mean "pending"?`},
		{"bad status in a list", []string{"--status", "pending,done"}, `unknown approval status "done"`},
		{"bad risk", []string{"--risk", "huge"}, `--risk: unknown risk tier "huge"`},
		{"bad cursor", []string{"--cursor", "page-2"}, `invalid cursor "page-2"`},
		{"zero limit", []string{"--limit", "0"}, "--limit 0: want 1 to 1000"},
		{"huge limit", []string{"--limit", "5000"}, "--limit 5000: want 1 to 1000"},
		{"bad duration", []string{"--older-than", "a while"}, `invalid argument "a while" for "--older-than"`},
		{"negative duration", []string{"--newer-than", "-1h"}, "take a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"approvals", "list", "--db", td.path}, tc.args...)...)
			if got, want := code, exitUsage; got != want {
				t.Errorf("exit %d, want %d", got, want)
			}
			if !strings.Contains(stderr, tc.contains) {
				t.Errorf("stderr does not contain %q\nstdout:\n%s\nstderr:\n%s", tc.contains, stdout, stderr)
			}
		})
	}
}

func TestApprovalsShow(t *testing.T) {
	td := newTestDB(t)
	push, deploy := td.approvals["push"], td.approvals["deploy"]
	for _, tc := range []struct {
		name     string
		id       string
		contains []string
	}{
		{"approved", push.ID, []string{
			"id:           " + push.ID,
			"status:       approved",
			"outcome:      ask: the agent waits for the answer",
			"hash:         sha256:" + push.ActionHash.String(),
			"class:        git.push (capability process.exec)",
			"risk tier:    network-egress",
			"requested by: requester",
			"trace:        trace-alice",
			"reviewers:    rev",
			"owner:        owner",
			"created:      " + push.Created.Format("2006-01-02T15:04:05Z"),
			"expires:      " + push.Expires.Format("2006-01-02T15:04:05Z") + " (in 4d) (timeout 100h0m0s)",
			"resolved:     " + push.ResolvedAt.Format("2006-01-02T15:04:05Z") + " (1h ago) by rev via cli",
			"rule:         test",
			"args:\n  {\n    \"command\": \"git push\"\n  }\n",
		}},
		{"a proposal", deploy.ID, []string{
			"outcome:      suggest: a proposal; once approved it may run once",
			"summary:      " + longSummary + "\n",
			"grant ttl:    1h0m0s",
			"grant used:   not yet",
			"decision:\n  outcome:     suggest\n  rule:        deploys (policy.yaml:7:5)\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "approvals", "show", tc.id, "--db", td.path)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, want := range tc.contains {
				if !strings.Contains(stdout, want) {
					t.Errorf("output does not contain %q\n%s", want, stdout)
				}
			}
		})
	}

	code, stdout, stderr := runCLI(t, "approvals", "show", "--json", push.ID, "--db", td.path)
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var got airlock.Approval
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	var args bytes.Buffer
	if err := json.Compact(&args, got.Args); err != nil {
		t.Fatal(err)
	}
	if got.ID != push.ID || got.ActionHash != push.ActionHash || got.Status != airlock.StatusApproved || args.String() != string(push.Args) {
		t.Errorf("--json printed %+v, want %+v", got, push)
	}
}

func TestApprovalsShowErrors(t *testing.T) {
	td := newTestDB(t)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"unknown id", []string{"0193a000-0000-7000-8000-000000000000"}, exitCheck, `no approval request "0193a000-0000-7000-8000-000000000000"`},
		{"no id", nil, exitUsage, "airlock approvals show needs one approval ID, got 0 argument(s)"},
		{"two ids", []string{"a", "b"}, exitUsage, "needs one approval ID, got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"approvals", "show", "--db", td.path}, tc.args...)...)
			if got, want := code, tc.code; got != want {
				t.Errorf("exit %d, want %d", got, want)
			}
			if !strings.Contains(stdout+stderr, tc.contains) {
				t.Errorf("output does not contain %q\nstdout:\n%s\nstderr:\n%s", tc.contains, stdout, stderr)
			}
		})
	}
}

func TestArgsText(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"none", ``, "(none)"},
		{"indented", `{"a":[1,2],"b":{}}`, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}"},
		{"HTML escapes read as characters", `{"command":"make \u0026\u0026 rm \u003cx\u003e"}`, "{\n  \"command\": \"make && rm <x>\"\n}"},
		{"obscured letters", `{"c":"\u0072\u006D -rf /"}`, "{\n  \"c\": \"rm -rf /\"\n}"},
		{"surrogate pair", `{"c":"\ud83d\ude80"}`, "{\n  \"c\": \"🚀\"\n}"},
		{"needed escapes stay", `{"c":"say \"hi\" \\u0026 \u0022 \u005c \n \u000a \u001b"}`,
			"{\n  \"c\": \"say \\\"hi\\\" \\\\u0026 \\u0022 \\u005c \\n \\u000a \\u001b\"\n}"},
		{"invisible and reordering characters", "{\"c\":\"a\\u200bb \u202e\"}", "{\n  \"c\": \"a\\u200bb \\u202e\"\n}"},
		{"lone surrogate", `{"c":"\ud800x"}`, "{\n  \"c\": \"\\ud800x\"\n}"},
		{"escaped key", `{"\u0061":1}`, "{\n  \"a\": 1\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := argsText(json.RawMessage(tc.args))
			if got != tc.want {
				t.Errorf("argsText(%s) =\n%s\nwant\n%s", tc.args, got, tc.want)
			}
			if tc.args == "" {
				return
			}
			// The same JSON value.
			var a, b any
			if err := json.Unmarshal([]byte(tc.args), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(got), &b); err != nil {
				t.Fatalf("argsText printed invalid JSON: %v\n%s", err, got)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("argsText changed the value: %v, want %v", b, a)
			}
		})
	}
}

// An approval ID may be given by its first characters, as git names a
// commit; an ambiguous start lists the requests it names, an unknown one
// says so.
func TestApprovalIDPrefix(t *testing.T) {
	ts := newTestServer(t)
	agent := client.New(ts.url, ts.secrets["agent"])
	var ids []string
	for _, env := range []string{"prod", "staging"} {
		enf, err := agent.CheckWait(t.Context(), airlock.Action{Agent: "agent-1", Tool: "deploy", Args: json.RawMessage(`{"env":"` + env + `"}`)}, 0)
		if err != nil || !enf.Pending {
			t.Fatalf("check: %+v, %v", enf, err)
		}
		ids = append(ids, enf.Approval.ID)
	}
	common := 0
	for common < len(ids[0]) && ids[0][common] == ids[1][common] {
		common++
	}
	unique := ids[1][:common+1]
	ts.want(t, "bob", []string{"approvals", "show", unique}, exitOK, "id:           "+ids[1], `"env": "staging"`)
	ts.want(t, "bob", []string{"approvals", "show", strings.ToUpper(unique)}, exitOK, "id:           "+ids[1])
	ts.want(t, "bob", []string{"approvals", "show", ids[0][:common]}, exitUsage,
		"airlock: approval ID "+ids[0][:common]+" is ambiguous", ids[0]+"  pending", ids[1]+"  pending", "give more of the ID")
	ts.want(t, "bob", []string{"approvals", "show", "ffff"}, exitCheck, "not_found: no approval request's ID starts with ffff")
	ts.want(t, "bob", []string{"approvals", "show", "deploy%"}, exitUsage, `"deploy%" is not an approval ID`)
	ts.want(t, "", []string{"approvals", "show", unique, "--db", ts.db.Path}, exitOK, "id:           "+ids[1])
	ts.want(t, "bob", []string{"approvals", "approve", unique, "--reason", "ok"}, exitOK, "approved")
	ts.want(t, "bob", []string{"approvals", "reject", ids[0][:common+1], "--reason", "no"}, exitOK, "rejected")
	// Whole IDs are taken as they are.
	ts.want(t, "bob", []string{"approvals", "show", ids[0]}, exitOK, "id:           "+ids[0])
}

// TestApproveWithEdit: `approve --args` releases a waiting check with the
// edited arguments, the audit log keeps both hashes and the diff, and an
// edit into what the policy denies is refused.
func TestApproveWithEdit(t *testing.T) {
	ts := newTestServer(t)
	bash := []string{"check", "--agent", "agent-1", "--tool", "Bash", "--cwd", "/w", "--args", `{"command":"rm -rf build"}`}
	b := ts.background(t, "agent", bash...)
	b.waitOutput(t, "waiting for approval ")
	m := regexp.MustCompile(`waiting for approval (\S+)`).FindStringSubmatch(b.stderr.String() + b.stdout.String())
	if m == nil {
		t.Fatalf("no approval ID:\n%s%s", b.stdout.String(), b.stderr.String())
	}
	id := m[1]
	// A script the analyser cannot read is denied: no edit reaches it.
	ts.want(t, "admin", []string{"approvals", "approve", id, "--args", `{"command":"echo \"unterminated"}`}, exitCheck,
		"an edit cannot turn a request into what the policy refuses")
	ts.want(t, "admin", []string{"approvals", "approve", id, "--args", `{"command":"a","command":"b"}`}, exitUsage, "duplicate")
	ts.want(t, "admin", []string{"approvals", "approve", id, "--args", `{"command":"rm -rf build/tmp"}`}, exitOK,
		"approved approval "+id, "edited by ops: runs sha256:")
	if got := b.wait(t); got != exitOK {
		t.Fatalf("the waiting check exited %d\nstdout:\n%s\nstderr:\n%s", got, b.stdout.String(), b.stderr.String())
	}
	if !strings.Contains(b.stdout.String(), `edited args: {"command":"rm -rf build/tmp"}`) {
		t.Fatalf("the waiting check does not print the edited arguments:\n%s", b.stdout.String())
	}
	ap, err := ts.db.Approval(t.Context(), id)
	if err != nil || ap.Edit == nil {
		t.Fatalf("the request: %+v, %v", ap, err)
	}
	ts.want(t, "bob", []string{"audit", "tail", "--kind", "approval.resolved", "--json"}, exitOK,
		`"from":"`+ap.ActionHash.String()+`"`, `"to":"`+ap.Edit.ActionHash.String()+`"`, `"diff":[{"value":"rm -rf build/tmp","op":"replace","path":"/command"}]`)
}
