/* Which renderer GTK draws the windows with.
 *
 * GTK draws with GL by default. Where GL is Mesa's software rasteriser (no
 * GPU: a virtual machine, Xvfb, a remote desktop) every frame of the window
 * costs two threads of CPU that training needs: the window trained the
 * Fashion-MNIST MLP at 7-15% of the CLI's samples/s (bench/README.md,
 * "Window against CLI"), against 68-127% with Cairo. There Cairo is
 * chosen. A GSK_RENDERER the user set is kept. Call before the first window
 * is realized (GTK reads GSK_RENDERER once). */
#ifndef TWB_RENDERER_CHOICE_H
#define TWB_RENDERER_CHOICE_H

void twb_choose_renderer(void);

#endif
