/* twb --screenshot FILE.png [--view designer|dashboard|graph] [--model FILE]
 *     [--logdb FILE] [--size WxH]
 * The window as it would appear at that size, written as a PNG once its
 * first complete frame is drawn. */
#ifndef TWB_SCREENSHOT_CMD_H
#define TWB_SCREENSHOT_CMD_H

/* argv[0] is "--screenshot" (or "--screenshot=FILE.png"). Exit status: 0,
 * 1 when the window or the file cannot be made, 2 for a bad command line. */
int twb_screenshot_command(int argc, char **argv);

#endif
