package main

import "syscall"

// procAttr makes the kernel SIGKILL a child (a stand-in or a serve) when
// the command dies, even by SIGKILL, so that none outlives it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
