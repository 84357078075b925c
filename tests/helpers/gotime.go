// gotime prints the seconds since the epoch as Go's runtime reads them:
// through the vDSO, which the runtime finds and parses itself (no libc).
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println(time.Now().Unix())
}
