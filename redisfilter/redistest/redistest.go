// Package redistest runs a real redis-server for tests, as net/http/httptest
// runs an HTTP server: on 127.0.0.1, on a free port, in a temporary
// directory, stopped at the end of the test.
//
// It runs Debian's redis-server ("apt-get install redis-server"), found on
// PATH or in /usr/bin, /usr/sbin or /usr/local/bin; REDIS_SERVER names
// another binary. Without one, Start fails the test with a message saying
// what to install: tests that prove something against Redis must not pass
// by skipping.
package redistest

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Server is one redis-server process, which a test may kill and start
// again on the same port and directory.
type Server struct {
	Port int
	Dir  string // the server's working directory: its AOF, RDB and log

	t    testing.TB
	bin  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary returns the redis-server to run, or fails t.
func Binary(t testing.TB) string {
	t.Helper()
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

// Start starts redis-server on 127.0.0.1 without persistence (--save ""
// --appendonly no) unless args turn it on: they follow the defaults, and a
// later argument overrides an earlier one. It stops the server at the end of
// the test.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Port: port, Dir: t.TempDir(), t: t, bin: Binary(t), args: args}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// StartCluster starts a one-node Redis Cluster that owns every slot, and
// waits until it is ready. Redis refuses commands and scripts whose keys lie
// in different slots (CROSSSLOT) even then, so it shows what a larger
// Cluster would refuse.
func StartCluster(t testing.TB, args ...string) *Server {
	t.Helper()
	s := Start(t, append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}, args...)...)
	c := s.Client()
	ctx := context.Background()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, _ := c.ClusterInfo(ctx).Result()
		if strings.Contains(info, "cluster_state:ok") {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ready: %s", info)
		}
	}
}

// Addr returns host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL returns the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Restart starts the server again, after Kill or Stop, on the same port,
// directory and arguments, and waits until it answers (has loaded its
// data).
func (s *Server) Restart() {
	s.t.Helper()
	args := append([]string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(s.Dir, "redis.log"),
	}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Dir = s.Dir
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.bin, err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s.ready() {
			return
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			s.t.Fatalf("redis-server exited at start: %s\n%s", s.cmd.ProcessState, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server did not listen on %s within 10 s", s.Addr())
		}
	}
}

// ready reports whether the server answers PING, or asks for a password
// first: a server that is loading its data answers LOADING.
func (s *Server) ready() bool {
	conn, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && (strings.HasPrefix(line, "+PONG") || strings.HasPrefix(line, "-NOAUTH"))
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Stop ends the server with SIGTERM, and SIGKILL after 5 s.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

func (s *Server) signal(sig syscall.Signal) {
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

// Client returns a client of the server, closed at the end of the test.
// Each change may adjust its options.
func (s *Server) Client(change ...func(*redis.Options)) *redis.Client {
	opt := &redis.Options{Addr: s.Addr()}
	for _, c := range change {
		c(opt)
	}
	c := redis.NewClient(opt)
	s.t.Cleanup(func() { c.Close() })
	return c
}
