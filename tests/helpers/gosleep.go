// gosleep: Go's own waits — time.Sleep, a time.Timer, time.After in a
// select, a time.Ticker — each for 300 ms, measured on the host's clock
// (the mtime the kernel stamps on a file we write, which no filter sees).
// Prints one line per wait with the elapsed milliseconds; exits 1 if one
// of them ended more than 50 ms away from 300 ms.
package main

import (
	"fmt"
	"os"
	"time"
)

func hostMs(f *os.File) int64 {
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		panic(err)
	}
	st, err := f.Stat()
	if err != nil {
		panic(err)
	}
	return st.ModTime().UnixNano() / 1e6
}

func main() {
	f, err := os.CreateTemp("", "gosleep")
	if err != nil {
		panic(err)
	}
	os.Remove(f.Name())
	const d = 300 * time.Millisecond
	waits := []struct {
		name string
		fn   func()
	}{
		{"sleep", func() { time.Sleep(d) }},
		{"timer", func() { <-time.NewTimer(d).C }},
		{"after", func() {
			select {
			case <-time.After(d):
			}
		}},
		{"ticker", func() { t := time.NewTicker(d); <-t.C; t.Stop() }},
	}
	status := 0
	for _, w := range waits {
		t0 := hostMs(f)
		w.fn()
		e := hostMs(f) - t0
		fmt.Printf("go %s elapsed=%d ms\n", w.name, e)
		if e < 290 || e > 350 {
			status = 1
		}
	}
	os.Exit(status)
}
