// goloop prints, every 20 ms, the seconds of CLOCK_REALTIME as Go's
// runtime reads them (through the vDSO, found by the runtime itself: no
// libc) and by the raw syscall, and CLOCK_MONOTONIC's the same two ways:
//
//	SEQ RT_VDSO RT_SYS MONO_VDSO MONO_SYS
//
// A Go program runs many threads: attach must give every one the filter.
package main

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func rawSec(clock uintptr) int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Sec
}

func main() {
	for seq := 0; ; seq++ {
		fmt.Printf("%d %d %d %d %d\n", seq, time.Now().Unix(), rawSec(0), nanotime()/1e9, rawSec(1))
		time.Sleep(20 * time.Millisecond)
	}
}
