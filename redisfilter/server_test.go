package redisfilter

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests run a real redis-server, Debian's package (bash build.sh setup
// installs it), on 127.0.0.1 with a free port and a temporary directory.
// REDIS_SERVER names another binary. Without one the tests fail: they are
// the proof that the package works against Redis, so they never skip.

// A server is one redis-server process of a test, restartable on the same
// port and directory.
type server struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
}

func redisServer(t testing.TB) string {
	if p := os.Getenv("REDIS_SERVER"); p != "" {
		return p
	}
	p, err := exec.LookPath("redis-server")
	if err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("redis-server not found (%v): these tests run a real Redis; install it with "+
		"\"apt-get install redis-server\" (bash build.sh setup does), or set REDIS_SERVER", err)
	return ""
}

// startServer starts redis-server without persistence unless args turn it
// on (later arguments override earlier ones), and stops it at the end of
// the test.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &server{t: t, bin: redisServer(t), port: port, dir: t.TempDir(), args: args}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) start() {
	s.t.Helper()
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Dir = s.dir
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.bin, err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", s.addr(), time.Second)
		if err == nil {
			conn.Close()
			return
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server exited at start: %s\n%s", s.cmd.ProcessState, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server did not listen on %s within 10 s", s.addr())
		}
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *server) kill() { s.signal(syscall.SIGKILL) }

// stop ends the server with SIGTERM (SIGKILL after 5 s).
func (s *server) stop() { s.signal(syscall.SIGTERM) }

func (s *server) signal(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// client returns a client of the server, closed at the end of the test.
// change may adjust its options.
func (s *server) client(change ...func(*redis.Options)) *redis.Client {
	opt := &redis.Options{Addr: s.addr()}
	for _, c := range change {
		c(opt)
	}
	c := redis.NewClient(opt)
	s.t.Cleanup(func() { c.Close() })
	return c
}

// noRetries turns go-redis's retries off, so a broken connection shows as
// an error at once.
func noRetries(o *redis.Options) { o.MaxRetries = -1 }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// go-redis logs every failed dial; the outage tests cause many on purpose
// and check the errors the calls return instead.
func init() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
