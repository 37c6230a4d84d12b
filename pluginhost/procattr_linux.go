package pluginhost

import "syscall"

// procAttr makes the kernel SIGKILL the plugin when the host dies, even by
// SIGKILL, so a plugin never outlives its host.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
