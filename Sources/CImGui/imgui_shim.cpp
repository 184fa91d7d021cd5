// C surface over Dear ImGui 1.86 and its GLFW + Vulkan backends (compiled into Debian's libimgui.a).
#include "dl_imgui.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <vulkan/vulkan.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#include <cfloat>
#include <cmath>

// ImGui 1.86 reads keys as a key-down table sampled at NewFrame, so a press and its release
// between two frames (a quick tap, xdotool) would never be seen. A release of a key pressed
// since the last NewFrame waits until after the next one, and is applied just before the NewFrame
// after that: never between NewFrame and the widgets, where a Shift or Ctrl release changes
// io.KeyShift/KeyCtrl but not io.KeyMods (made at NewFrame) and a text field's InputTextEx aborts
// on their mismatch (xdotool typing "pair:/a/B" into the source field crashed the viewer).
static GLFWwindow *g_window = nullptr;
static bool g_pressed_since_frame[GLFW_KEY_LAST + 1];
static bool g_release_pending[GLFW_KEY_LAST + 1];
static bool g_release_next_frame[GLFW_KEY_LAST + 1];

extern "C" {

int dl_imgui_init(void *glfw_window, void *instance, void *physical_device, void *device,
                  uint32_t queue_family, void *queue, void *descriptor_pool, void *render_pass,
                  uint32_t image_count) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO &io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini next to the user's files
    // No keyboard navigation: Tab, arrows and Space belong to the viewer's key table.
    io.ConfigFlags &= ~ImGuiConfigFlags_NavEnableKeyboard;
    ImGui::StyleColorsDark();
    // The viewer installs the GLFW callbacks and forwards what ImGui may see (dl_imgui_glfw_*).
    if (!ImGui_ImplGlfw_InitForVulkan((GLFWwindow *)glfw_window, false)) return 0;
    g_window = (GLFWwindow *)glfw_window;
    ImGui_ImplVulkan_InitInfo info = {};
    info.Instance = (VkInstance)instance;
    info.PhysicalDevice = (VkPhysicalDevice)physical_device;
    info.Device = (VkDevice)device;
    info.QueueFamily = queue_family;
    info.Queue = (VkQueue)queue;
    info.PipelineCache = VK_NULL_HANDLE;
    info.DescriptorPool = (VkDescriptorPool)descriptor_pool;
    info.Subpass = 0;
    info.MinImageCount = image_count < 2 ? 2 : image_count;
    info.ImageCount = image_count < 2 ? 2 : image_count;
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    return ImGui_ImplVulkan_Init(&info, (VkRenderPass)render_pass) ? 1 : 0;
}

int dl_imgui_upload_fonts(void *command_buffer) {
    return ImGui_ImplVulkan_CreateFontsTexture((VkCommandBuffer)command_buffer) ? 1 : 0;
}

void dl_imgui_fonts_uploaded(void) { ImGui_ImplVulkan_DestroyFontUploadObjects(); }

void dl_imgui_set_min_image_count(uint32_t count) { ImGui_ImplVulkan_SetMinImageCount(count < 2 ? 2 : count); }

void dl_imgui_shutdown(void) {
    ImGui_ImplVulkan_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
}

void dl_imgui_new_frame(void) {
    // Releases held back through the last frame (its key was seen down there) go before NewFrame.
    for (int k = 0; k <= GLFW_KEY_LAST; k++) {
        if (g_release_next_frame[k]) {
            g_release_next_frame[k] = false;
            ImGui_ImplGlfw_KeyCallback(g_window, k, 0, GLFW_RELEASE, 0);
        }
    }
    ImGui_ImplVulkan_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    for (int k = 0; k <= GLFW_KEY_LAST; k++) {
        g_pressed_since_frame[k] = false;
        if (g_release_pending[k]) {
            g_release_pending[k] = false;
            g_release_next_frame[k] = true;
        }
    }
}

void dl_imgui_render(void *command_buffer) {
    ImGui::Render();
    ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), (VkCommandBuffer)command_buffer);
}

void dl_imgui_end_frame(void) { ImGui::EndFrame(); }

int dl_imgui_want_mouse(void) { return ImGui::GetIO().WantCaptureMouse ? 1 : 0; }
int dl_imgui_want_text_input(void) { return ImGui::GetIO().WantTextInput ? 1 : 0; }

void dl_imgui_glfw_key(void *window, int key, int scancode, int action, int mods) {
    if (key >= 0 && key <= GLFW_KEY_LAST) {
        if (action == GLFW_PRESS) {
            g_pressed_since_frame[key] = true;
            g_release_pending[key] = false;
            g_release_next_frame[key] = false;
        } else if (action == GLFW_RELEASE && g_pressed_since_frame[key]) {
            g_release_pending[key] = true;
            return;
        }
    }
    ImGui_ImplGlfw_KeyCallback((GLFWwindow *)window, key, scancode, action, mods);
}
void dl_imgui_glfw_char(void *window, unsigned int c) { ImGui_ImplGlfw_CharCallback((GLFWwindow *)window, c); }
void dl_imgui_glfw_mouse_button(void *window, int button, int action, int mods) {
    ImGui_ImplGlfw_MouseButtonCallback((GLFWwindow *)window, button, action, mods);
}
void dl_imgui_glfw_scroll(void *window, double dx, double dy) { ImGui_ImplGlfw_ScrollCallback((GLFWwindow *)window, dx, dy); }
void dl_imgui_glfw_cursor_enter(void *window, int entered) { ImGui_ImplGlfw_CursorEnterCallback((GLFWwindow *)window, entered); }
void dl_imgui_glfw_focus(void *window, int focused) { ImGui_ImplGlfw_WindowFocusCallback((GLFWwindow *)window, focused); }

int dl_imgui_begin(const char *title, float x, float y, float w, float h, float alpha, int decorated) {
    ImGui::SetNextWindowPos(ImVec2(x, y), decorated ? ImGuiCond_Once : ImGuiCond_Always);
    if (w > 0) ImGui::SetNextWindowSize(ImVec2(w, h > 0 ? h : 0), decorated ? ImGuiCond_Once : ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(alpha);
    // Undecorated: a bare overlay, sized by its content unless a height is given (then clipped).
    ImGuiWindowFlags flags = decorated ? 0
        : (ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoSavedSettings |
           ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | (h > 0 ? 0 : ImGuiWindowFlags_AlwaysAutoResize));
    return ImGui::Begin(title, nullptr, flags) ? 1 : 0;
}

int dl_imgui_begin_docked(const char *title, float x, float y, float w, float h, float alpha) {
    ImGui::SetNextWindowPos(ImVec2(x, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(w, h), ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(alpha);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                             ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    return ImGui::Begin(title, nullptr, flags) ? 1 : 0;
}

void dl_imgui_end(void) { ImGui::End(); }

void dl_imgui_text(const char *text, float r, float g, float b, float a) {
    if (a > 0) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(r, g, b, a));
    ImGui::TextUnformatted(text);
    if (a > 0) ImGui::PopStyleColor();
}

int dl_imgui_checkbox(const char *label, int *value) {
    bool v = *value != 0;
    bool changed = ImGui::Checkbox(label, &v);
    *value = v ? 1 : 0;
    return changed ? 1 : 0;
}

int dl_imgui_slider_float(const char *label, float *value, float min, float max, const char *format) {
    // Typed values (Ctrl+click) are clamped too, not only dragged ones.
    return ImGui::SliderFloat(label, value, min, max, format, ImGuiSliderFlags_AlwaysClamp) ? 1 : 0;
}

int dl_imgui_slider_int64(const char *label, int64_t *value, int64_t min, int64_t max, const char *format) {
    return ImGui::SliderScalar(label, ImGuiDataType_S64, value, &min, &max, format, ImGuiSliderFlags_AlwaysClamp) ? 1 : 0;
}

void dl_imgui_begin_disabled(int disabled) { ImGui::BeginDisabled(disabled != 0); }
void dl_imgui_end_disabled(void) { ImGui::EndDisabled(); }

int dl_imgui_radio(const char *label, int active) { return ImGui::RadioButton(label, active != 0) ? 1 : 0; }

int dl_imgui_combo(const char *label, int *current, const char *items) {
    return ImGui::Combo(label, current, items) ? 1 : 0;
}

int dl_imgui_button(const char *label) { return ImGui::Button(label) ? 1 : 0; }
void dl_imgui_same_line(void) { ImGui::SameLine(); }
void dl_imgui_separator(void) { ImGui::Separator(); }

void dl_imgui_text_wrapped(const char *text, float r, float g, float b, float a) {
    ImGui::PushTextWrapPos(0.0f);
    if (a > 0) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(r, g, b, a));
    ImGui::TextUnformatted(text);
    if (a > 0) ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
}

void dl_imgui_progress_bar(float fraction, const char *overlay) {
    ImGui::ProgressBar(fraction, ImVec2(-1.0f, 0.0f), overlay);
}

int dl_imgui_input_text(const char *label, char *buffer, size_t size) {
    return ImGui::InputText(label, buffer, size, ImGuiInputTextFlags_EnterReturnsTrue) ? 1 : 0;
}

int dl_imgui_header(const char *label, int default_open) {
    return ImGui::CollapsingHeader(label, default_open ? ImGuiTreeNodeFlags_DefaultOpen : 0) ? 1 : 0;
}

void dl_imgui_last_item_rect(float *out4) {
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    out4[0] = a.x; out4[1] = a.y; out4[2] = b.x - a.x; out4[3] = b.y - a.y;
}

void dl_imgui_window_rect(float *out4) {
    ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    out4[0] = p.x; out4[1] = p.y; out4[2] = s.x; out4[3] = s.y;
}

void dl_imgui_overlay_text(float x, float y, const char *text, float r, float g, float b) {
    ImDrawList *dl = ImGui::GetForegroundDrawList();
    ImVec2 size = ImGui::CalcTextSize(text);
    dl->AddRectFilled(ImVec2(x - 4, y - 2), ImVec2(x + size.x + 4, y + size.y + 2), IM_COL32(0, 0, 0, 200), 3.0f);
    dl->AddText(ImVec2(x, y), ImGui::GetColorU32(ImVec4(r, g, b, 1)), text);
}

void dl_imgui_overlay_line(float x0, float y0, float x1, float y1, float r, float g, float b) {
    ImDrawList *dl = ImGui::GetForegroundDrawList();
    ImU32 c = ImGui::GetColorU32(ImVec4(r, g, b, 1));
    dl->AddLine(ImVec2(x0, y0), ImVec2(x1, y1), c, 2.0f);
    dl->AddCircleFilled(ImVec2(x0, y0), 4.0f, c);
    dl->AddCircleFilled(ImVec2(x1, y1), 4.0f, c);
}

void dl_imgui_plot_series(const char *label, const char *unit, const double *current, const float *values,
                          int series, int count, float vmin, float vmax, float height, float marker) {
    static const ImU32 colors[] = { IM_COL32(240, 90, 80, 255), IM_COL32(110, 220, 110, 255), IM_COL32(100, 150, 255, 255) };
    if (current && series == 3)
        ImGui::Text("%s  x %.3f  y %.3f  z %.3f %s", label, current[0], current[1], current[2], unit);
    else
        ImGui::TextUnformatted(label);
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float w = ImGui::GetContentRegionAvail().x;
    if (w < 10) w = 10;
    ImVec2 p1 = ImVec2(p0.x + w, p0.y + height);
    ImGui::Dummy(ImVec2(w, height));
    ImDrawList *dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg));
    float span = vmax - vmin;
    if (!(span > 0)) span = 1;
    if (vmin < 0 && vmax > 0) {
        float y0 = p1.y - (0 - vmin) / span * height;
        dl->AddLine(ImVec2(p0.x, y0), ImVec2(p1.x, y0), IM_COL32(128, 128, 128, 120));
    }
    if (count >= 2) {
        float dx = w / (float)(count - 1);
        for (int s = 0; s < series; s++) {
            const float *v = values + (size_t)s * (size_t)count;
            ImU32 c = colors[s % 3];
            for (int i = 1; i < count; i++) {
                float a = v[i - 1], b = v[i];
                if (a != a || b != b) continue;  // NaN: a gap
                dl->AddLine(ImVec2(p0.x + dx * (float)(i - 1), p1.y - (a - vmin) / span * height),
                            ImVec2(p0.x + dx * (float)i, p1.y - (b - vmin) / span * height), c, 1.5f);
            }
        }
    }
    if (marker >= 0 && marker <= 1) {
        float x = p0.x + marker * w;
        dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), IM_COL32(255, 255, 160, 200));
    }
}

void dl_imgui_overlay_rect(float x0, float y0, float x1, float y1, float r, float g, float b) {
    ImDrawList *dl = ImGui::GetForegroundDrawList();
    dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), ImGui::GetColorU32(ImVec4(r, g, b, 1)), 0.0f, 0, 2.0f);
}

void dl_imgui_plot_lines(const char *label, const float *values, int count, const char *overlay, float min, float max,
                         float height) {
    ImGui::PlotLines(label, values, count, 0, overlay, std::isnan(min) ? FLT_MAX : min, std::isnan(max) ? FLT_MAX : max,
                     ImVec2(ImGui::GetContentRegionAvail().x, height));   // 1.86's PlotEx takes no negative width
}

int dl_imgui_input_float(const char *label, float *value, const char *format) {
    return ImGui::InputFloat(label, value, 0.0f, 0.0f, format, ImGuiInputTextFlags_EnterReturnsTrue) ? 1 : 0;
}

void dl_imgui_set_next_open(int open) { ImGui::SetNextItemOpen(open != 0, ImGuiCond_Always); }

void dl_imgui_set_scroll_here_y(float ratio) { ImGui::SetScrollHereY(ratio); }
float dl_imgui_scroll_y(void) { return ImGui::GetScrollY(); }
void dl_imgui_set_scroll_y(float y) { ImGui::SetScrollY(y); }

}  // extern "C"
