// gorate measures how fast Go's clocks run against the host's: the
// runtime reads them through the vDSO, which it finds and parses itself
// (no libc). The host's clock is the mtime the kernel stamps on a file we
// write (coarse realtime, which no filter sees), polled for SEC seconds.
// Prints "wall=NS mono=NS host=NS": what each advanced meanwhile.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func hostNs(f *os.File) int64 {
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		panic(err)
	}
	st, err := f.Stat()
	if err != nil {
		panic(err)
	}
	return st.ModTime().UnixNano()
}

func main() {
	sec, _ := strconv.ParseFloat(os.Args[1], 64)
	f, err := os.CreateTemp("", "gorate")
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	h0 := hostNs(f)
	t0 := time.Now()
	for hostNs(f)-h0 < int64(sec*1e9) {
	}
	t1 := time.Now()
	h1 := hostNs(f)
	fmt.Printf("wall=%d mono=%d host=%d\n", t1.UnixNano()-t0.UnixNano(), int64(t1.Sub(t0)), h1-h0)
}
