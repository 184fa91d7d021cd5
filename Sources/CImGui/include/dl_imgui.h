// Dear ImGui (C++) behind a small C surface the Viewer calls from Swift.
//
// Swift cannot call C++ class members, default arguments or ImGui's `bool*` overloads directly,
// so each function here wraps one ImGui call (or the GLFW/Vulkan backend setup) with plain C
// types. Vulkan and GLFW handles travel as `void *` so this header needs neither vulkan.h nor
// glfw3.h (their types would otherwise be defined twice, here and in CVulkan/CGLFW).
// Every symbol is prefixed `dl_`.
#ifndef DL_IMGUI_H
#define DL_IMGUI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Creates the ImGui context and both backends (GLFW without callbacks of its own: the caller
/// forwards events through dl_imgui_glfw_*; Vulkan drawing in `render_pass` subpass 0), keyboard
/// navigation off; returns 0 on failure.
/// Why: ImGui_ImplVulkan_InitInfo is a C++ struct and the backends are C++ functions.
int dl_imgui_init(void *glfw_window, void *instance, void *physical_device, void *device,
                  uint32_t queue_family, void *queue, void *descriptor_pool, void *render_pass,
                  uint32_t image_count);
/// Records the font atlas upload into `command_buffer`. Why: C++ function.
int dl_imgui_upload_fonts(void *command_buffer);
/// Frees the font upload buffer after its command buffer finished. Why: C++ function.
void dl_imgui_fonts_uploaded(void);
/// After a swapchain was recreated with another image count. Why: C++ function.
void dl_imgui_set_min_image_count(uint32_t count);
/// Tears down both backends and the context. Why: C++ functions.
void dl_imgui_shutdown(void);

/// Starts a frame (backends, then ImGui::NewFrame). Why: three C++ calls in a fixed order.
void dl_imgui_new_frame(void);
/// Ends the frame and records its draw commands into the render pass that is open on `command_buffer`.
/// Why: ImGui::Render + ImGui_ImplVulkan_RenderDrawData (C++).
void dl_imgui_render(void *command_buffer);
/// Ends a frame that will not be drawn (minimized window). Why: ImGui::EndFrame is C++.
void dl_imgui_end_frame(void);

/// ImGui wants the mouse (over a window). Why: ImGuiIO is C++.
int dl_imgui_want_mouse(void);
/// A text field is being edited (the source field, a slider after Ctrl+click): keys are text now.
/// Why: ImGuiIO is C++.
int dl_imgui_want_text_input(void);

/// GLFW events the viewer's own callbacks hand to ImGui (dl_imgui_init installs none, so the
/// viewer decides which keys ImGui sees). Why: the backend's callbacks are C++ functions.
/// (A release of a key pressed since the last frame waits until after the next dl_imgui_new_frame.)
void dl_imgui_glfw_key(void *window, int key, int scancode, int action, int mods);
void dl_imgui_glfw_char(void *window, unsigned int c);
void dl_imgui_glfw_mouse_button(void *window, int button, int action, int mods);
void dl_imgui_glfw_scroll(void *window, double dx, double dy);
void dl_imgui_glfw_cursor_enter(void *window, int entered);
void dl_imgui_glfw_focus(void *window, int focused);

/// Begins a window at (x, y) with width w (height from its content when h <= 0, else clipped); `alpha` is the
/// background opacity; `decorated` 0 gives a bare overlay (no title, no input). Returns 0 when
/// collapsed; call dl_imgui_end either way. Why: ImGui::SetNextWindow* + ImGui::Begin (C++).
int dl_imgui_begin(const char *title, float x, float y, float w, float h, float alpha, int decorated);
/// A window held at (x, y) with size w×h every frame (a docked side panel): title bar and
/// scrollbar, but the user cannot move, resize or collapse it. End with dl_imgui_end.
int dl_imgui_begin_docked(const char *title, float x, float y, float w, float h, float alpha);
/// Why: ImGui::End (C++).
void dl_imgui_end(void);
/// Unformatted text; colored when a > 0. Why: ImGui::TextUnformatted / TextColored are C++ (variadic).
void dl_imgui_text(const char *text, float r, float g, float b, float a);
/// Why: ImGui::Checkbox takes `bool *`.
int dl_imgui_checkbox(const char *label, int *value);
/// Always clamped to min…max, typed values included. Why: ImGui::SliderFloat (C++, default arguments).
int dl_imgui_slider_float(const char *label, float *value, float min, float max, const char *format);
/// A 64-bit integer slider, always clamped to min…max (each within half the int64 range).
/// Why: ImGui::SliderScalar (C++, ImGuiDataType_S64).
int dl_imgui_slider_int64(const char *label, int64_t *value, int64_t min, int64_t max, const char *format);
/// Widgets between these are drawn dimmed and take no input when `disabled` is 1.
/// Why: ImGui::BeginDisabled / EndDisabled (C++).
void dl_imgui_begin_disabled(int disabled);
void dl_imgui_end_disabled(void);
/// Why: ImGui::RadioButton (C++).
int dl_imgui_radio(const char *label, int active);
/// A combo box over `items` ("a\0b\0\0"). Why: ImGui::Combo (C++).
int dl_imgui_combo(const char *label, int *current, const char *items);
/// Why: ImGui::Button (C++).
int dl_imgui_button(const char *label);
/// Why: ImGui::SameLine / Separator (C++).
void dl_imgui_same_line(void);
void dl_imgui_separator(void);
/// Text wrapped at the window's right edge; colored when a > 0. Why: ImGui::PushTextWrapPos (C++).
void dl_imgui_text_wrapped(const char *text, float r, float g, float b, float a);
/// A progress bar over the panel's width, `fraction` 0…1, with `overlay` text on it (NULL: the
/// percentage). Why: ImGui::ProgressBar (C++, ImVec2 argument).
void dl_imgui_progress_bar(float fraction, const char *overlay);
/// A one-line text field editing `buffer` (NUL-terminated, `size` bytes); 1 when Enter was pressed.
/// Why: ImGui::InputText (C++).
int dl_imgui_input_text(const char *label, char *buffer, size_t size);
/// Why: ImGui::CollapsingHeader (C++); open by default.
/// A collapsing header, open at first unless default_open is 0; true while open.
int dl_imgui_header(const char *label, int default_open);
/// The last widget's rectangle in window pixels (x, y, w, h). Why: ImGui::GetItemRect* (C++).
void dl_imgui_last_item_rect(float *out4);
/// The current window's rectangle (x, y, w, h). Why: ImGui::GetWindowPos/Size (C++).
void dl_imgui_window_rect(float *out4);
/// Text drawn over everything at (x, y) on a dark box. Why: ImDrawList is C++.
void dl_imgui_overlay_text(float x, float y, const char *text, float r, float g, float b);
/// A line and a dot in window pixels, over everything (3D distance picks). Why: ImDrawList is C++.
void dl_imgui_overlay_line(float x0, float y0, float x1, float y1, float r, float g, float b);
/// A plot the panel's width wide and `height` px high: `series` lines of `count` values each
/// (series i at values[i * count], drawn red, green, blue…), scaled so that [vmin, vmax] fills
/// it; a NaN value leaves a gap; a vertical marker at `marker` (0…1 across; outside: none). Above
/// it a line: `label`, then, when `current` is not NULL, its `series` values with 3 decimals and
/// `unit`. Nothing is allocated but ImGui's own draw buffers. Why: ImDrawList and ImGui::Text are C++.
void dl_imgui_plot_series(const char *label, const char *unit, const double *current, const float *values,
                          int series, int count, float vmin, float vmax, float height, float marker);

/// A rectangle outline (x0, y0)–(x1, y1) in window pixels, over everything (the quality ROI).
/// Why: ImDrawList is C++.
void dl_imgui_overlay_rect(float x0, float y0, float x1, float y1, float r, float g, float b);
/// A small line plot of `count` values over the panel's width, `height` pixels tall, scaled to
/// min…max (both NaN: from the values), `overlay` text on it (may be NULL). Why: ImGui::PlotLines (C++).
void dl_imgui_plot_lines(const char *label, const float *values, int count, const char *overlay, float min, float max,
                         float height);
/// A number field: typed, applied by Enter (leaving it without Enter keeps the old value); 1 then.
/// Why: ImGui::InputFloat (C++, default arguments).
int dl_imgui_input_float(const char *label, float *value, const char *format);
/// Opens (1) or closes (0) the next collapsing header or tree node. Why: ImGui::SetNextItemOpen (C++).
void dl_imgui_set_next_open(int open);
/// Scrolls the current window so the last item is at `ratio` of its height (0: top), from the next
/// frame. Why: ImGui::SetScrollHereY (C++).
void dl_imgui_set_scroll_here_y(float ratio);
/// The current window's scroll position, and setting it (from the next frame). Why: ImGui::GetScrollY / SetScrollY (C++).
float dl_imgui_scroll_y(void);
void dl_imgui_set_scroll_y(float y);

#ifdef __cplusplus
}
#endif
#endif
