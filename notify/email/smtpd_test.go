package email

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSMTP is an SMTP server for tests, speaking enough of RFC 5321 for
// go-mail: EHLO, STARTTLS, AUTH PLAIN, MAIL, RCPT, DATA, RSET, NOOP,
// QUIT. It records the mail it takes.
type fakeSMTP struct {
	// User and Pass, when User is set: AUTH PLAIN with them is required.
	User, Pass string
	// TLS: STARTTLS is offered (or, Implicit, spoken from the first byte).
	TLS      *tls.Config
	Implicit bool
	// Mute: greet nobody, say nothing (a server that hangs).
	Mute bool

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	rcpt  func(addr string) string
	mails []received
	conns map[net.Conn]bool
}

// received is one mail the server took.
type received struct {
	From   string
	To     []string
	User   string // who authenticated, "" for nobody
	TLS    bool
	Data   []byte
	Header mail.Header
	Body   string // decoded
}

// start serves on addr ("" for a free port on 127.0.0.1) until the test
// ends.
func (s *fakeSMTP) start(t *testing.T, addr string) *fakeSMTP {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.conns = ln, map[net.Conn]bool{}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Go(func() {
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					c.Close()
				}()
				s.serve(t, c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// Host and Port are where it listens.
func (s *fakeSMTP) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }
func (s *fakeSMTP) Port() int    { return s.ln.Addr().(*net.TCPAddr).Port }

// Refuse sets the answer to RCPT TO for each address: "" accepts it.
func (s *fakeSMTP) Refuse(answer func(addr string) string) {
	s.mu.Lock()
	s.rcpt = answer
	s.mu.Unlock()
}

// Mails returns the mail taken so far.
func (s *fakeSMTP) Mails() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.mails...)
}

func (s *fakeSMTP) serve(t *testing.T, c net.Conn) {
	if s.Mute {
		io.Copy(io.Discard, c) // until the client or the test closes it
		return
	}
	secure := false
	if s.Implicit {
		c, secure = tls.Server(c, s.TLS), true
	}
	tp := textproto.NewConn(c)
	reply := func(line string) { tp.PrintfLine("%s", line) }
	reply("220 fake.test ESMTP")
	var user, from string
	var to []string
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			ext := []string{"fake.test", "8BITMIME", "ENHANCEDSTATUSCODES"}
			if s.TLS != nil && !secure {
				ext = append(ext, "STARTTLS")
			}
			if s.User != "" {
				ext = append(ext, "AUTH PLAIN")
			}
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				reply("250" + sep + e)
			}
		case "HELO", "NOOP":
			reply("250 2.0.0 ok")
		case "STARTTLS":
			if s.TLS == nil || secure {
				reply("502 5.5.1 no")
				continue
			}
			reply("220 2.0.0 go ahead")
			tc := tls.Server(c, s.TLS)
			if tc.Handshake() != nil {
				return
			}
			c, tp, secure, user = tc, textproto.NewConn(tc), true, ""
		case "AUTH":
			mech, ir, _ := strings.Cut(arg, " ")
			if s.User == "" || !strings.EqualFold(mech, "PLAIN") {
				reply("504 5.5.4 unrecognized authentication type")
				continue
			}
			if ir == "" {
				reply("334 ")
				if ir, err = tp.ReadLine(); err != nil {
					return
				}
			}
			dec, _ := base64.StdEncoding.DecodeString(ir)
			parts := strings.Split(string(dec), "\x00")
			if len(parts) != 3 || parts[1] != s.User || parts[2] != s.Pass {
				reply("535 5.7.8 authentication credentials invalid")
				continue
			}
			user = parts[1]
			reply("235 2.7.0 authenticated")
		case "MAIL":
			if s.User != "" && user == "" {
				reply("530 5.7.0 authentication required")
				continue
			}
			from, to = between(arg), nil
			reply("250 2.1.0 ok")
		case "RCPT":
			addr := between(arg)
			s.mu.Lock()
			answer := ""
			if s.rcpt != nil {
				answer = s.rcpt(addr)
			}
			s.mu.Unlock()
			if answer != "" {
				reply(answer)
				continue
			}
			to = append(to, addr)
			reply("250 2.1.5 ok")
		case "DATA":
			if len(to) == 0 {
				reply("554 5.5.1 no valid recipients")
				continue
			}
			reply("354 go ahead")
			data, err := io.ReadAll(tp.DotReader())
			if err != nil {
				return
			}
			m := received{From: from, To: to, User: user, TLS: secure, Data: data}
			if msg, err := mail.ReadMessage(bytes.NewReader(data)); err != nil {
				t.Errorf("server: unreadable mail: %v\n%s", err, data)
			} else {
				m.Header = msg.Header
				body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
				if err != nil {
					t.Errorf("server: body is not quoted-printable: %v", err)
				}
				m.Body = string(body)
			}
			s.mu.Lock()
			s.mails = append(s.mails, m)
			s.mu.Unlock()
			from, to = "", nil
			reply("250 2.0.0 queued")
		case "RSET":
			from, to = "", nil
			reply("250 2.0.0 ok")
		case "QUIT":
			reply("221 2.0.0 bye")
			return
		default:
			reply("502 5.5.2 unknown command")
		}
	}
}

// between returns what stands between < and > in an SMTP argument.
func between(arg string) string {
	_, rest, _ := strings.Cut(arg, "<")
	addr, _, _ := strings.Cut(rest, ">")
	return addr
}

// subjectOf decodes a mail's Subject.
func subjectOf(t *testing.T, h mail.Header) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil {
		t.Fatalf("subject %q: %v", h.Get("Subject"), err)
	}
	return s
}

// testCert returns a certificate for 127.0.0.1 and localhost, and a pool
// that trusts it.
func testCert(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}}, pool
}

// closedPort returns an address on 127.0.0.1 where nothing listens (yet).
func closedPort(t *testing.T) (host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	host, p, _ := net.SplitHostPort(addr)
	port, _ = strconv.Atoi(p)
	return host, port
}
