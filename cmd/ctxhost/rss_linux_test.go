package main

import "syscall"

// maxRSSBytes is a child's peak resident set in bytes (Linux counts KiB).
func maxRSSBytes(ru *syscall.Rusage) float64 { return float64(ru.Maxrss) * 1024 }
