package taskmem_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	taskmem "github.com/taskmem/taskmem/clients/go"
)

const readyPrefix = "taskmem: serving on "

// hangGuard is how long a test waits for what the server does in its own time before calling it a hang: the
// Python suite's guard (tests/support/eventually.py), long enough for any load the suite meets. Never what a
// test judges.
const hangGuard = 120 * time.Second

// liveServer is a `taskmem serve` subprocess on a free loopback port with a
// temporary database.
type liveServer struct {
	t        *testing.T
	database string
	args     []string // extra `taskmem serve` arguments
	addr     string   // host:port it printed; kept across restarts

	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	output bytes.Buffer // stdout and stderr, for failure messages
}

// repoRoot is the repository root, found from this file's location so the
// tests run from any working directory.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func pythonPath(t *testing.T) string {
	if p := os.Getenv("TASKMEM_PYTHON"); p != "" {
		return p
	}
	p := filepath.Join(repoRoot(t), ".venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("these tests run a live server with %s (create it with `make test` or set TASKMEM_PYTHON): %v", p, err)
	}
	return p
}

// startServer starts a server with extra `taskmem serve` arguments (for
// example "--api-key", "KEY:ns1,ns2") and stops it when the test ends.
func startServer(t *testing.T, args ...string) *liveServer {
	t.Helper()
	s := &liveServer{
		t:        t,
		database: filepath.Join(t.TempDir(), "t.db"),
		args:     args,
		addr:     "127.0.0.1:0",
	}
	s.start()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server output:\n%s", s.logs())
		}
	})
	return s
}

func (s *liveServer) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.output.String()
}

func (s *liveServer) write(p []byte) {
	s.mu.Lock()
	s.output.Write(p)
	s.mu.Unlock()
}

type logWriter struct{ s *liveServer }

func (w logWriter) Write(p []byte) (int, error) { w.s.write(p); return len(p), nil }

// start launches the server on s.addr and waits for its ready line. After a
// restart the same port may still be held for a moment, so it retries.
func (s *liveServer) start() {
	s.t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		addr, err := s.launch()
		if err == "" {
			s.addr = addr
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("taskmem server did not start: %s\n%s", err, s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *liveServer) launch() (addr, failure string) {
	args := []string{"-m", "taskmem", "serve", "--listen", s.addr, "--database", s.database}
	args = append(args, s.args...)
	cmd := exec.Command(pythonPath(s.t), args...)
	cmd.Dir = repoRoot(s.t)
	cmd.Stderr = logWriter{s}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", cmd.Path, err)
	}
	ready := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		// Keep draining stdout for the life of the process.
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			s.write([]byte(line + "\n"))
			if rest, ok := strings.CutPrefix(line, readyPrefix); ok {
				select {
				case ready <- strings.TrimSpace(rest):
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case addr := <-ready:
		s.cmd, s.done = cmd, done
		return addr, ""
	case <-done:
		return "", "exited before serving"
	case <-time.After(hangGuard): // a hang guard: a busy shared machine can take a minute to start it
		_ = cmd.Process.Kill()
		<-done
		return "", "no ready line within 120s"
	}
}

// stop sends SIGTERM and waits for a graceful exit (SIGKILL after a 120 s hang guard).
func (s *liveServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(hangGuard):
		s.t.Errorf("server did not stop within 120s of SIGTERM; killing it")
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// restart stops the server and starts it again on the same port and database.
func (s *liveServer) restart() {
	s.t.Helper()
	s.stop()
	s.start()
}

// dial connects a client to the server and closes it when the test ends.
func (s *liveServer) dial(t *testing.T, opts ...taskmem.Option) *taskmem.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	client, err := taskmem.Dial(ctx, s.addr, opts...)
	if err != nil {
		t.Fatalf("Dial(%s): %v", s.addr, err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}
