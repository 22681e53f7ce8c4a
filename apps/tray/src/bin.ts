/** capnode-tray: placeholder entry until the tray lands. */
process.stderr.write('capnode-tray: not built yet\n');
process.exitCode = 1;
