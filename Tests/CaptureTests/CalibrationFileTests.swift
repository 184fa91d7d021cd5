import XCTest
import TestSupport
import Foundation
@testable import Capture
@testable import DepthKit

/// `--calibration` files of every kind, written here in the exact layout their writers use
/// (OpenCV's `cv::FileStorage` YAML and XML as the calibration sample writes them, ROS'
/// `camera_calibration_parsers`, Python's `yaml.dump`), against intrinsics computed by hand.
final class CalibrationFileTests: XCTestCase {
    var dir = ""
    override func setUpWithError() throws { dir = try makeTemporaryDirectory(self) }

    func write(_ name: String, _ text: String) throws -> String {
        let p = dir + "/" + name
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }

    /// OpenCV's calibration sample (cv::FileStorage, OpenCV 4) writing a 640x480 camera.
    static let openCVYAML = """
    %YAML:1.0
    ---
    calibration_time: "Wed 25 Nov 2026 14:00:00 UTC"
    nr_of_frames: 3
    image_width: 640
    image_height: 480
    board_width: 9
    board_height: 6
    square_size: 25.
    # flags:  +fix_principal_point +zero_tangent_dist
    flags: 12
    fisheye_model: 0
    camera_matrix: !!opencv-matrix
       rows: 3
       cols: 3
       dt: d
       data: [ 6.0512398681640625e+02, 0., 3.1250000000000000e+02, 0.,
           6.0798071289062500e+02, 2.4325000000000000e+02, 0., 0., 1. ]
    distortion_coefficients: !!opencv-matrix
       rows: 5
       cols: 1
       dt: d
       data: [ 1.1398429327416236e-01, -7.3251089408226562e-01, 0., 0.,
           1.1520357686990713e+00 ]
    avg_reprojection_error: 3.8229473215497127e-01
    per_view_reprojection_errors: !!opencv-matrix
       rows: 3
       cols: 1
       dt: f
       data: [ 3.93291265e-01, 3.53170812e-01, 3.98906827e-01 ]

    """

    static let openCVXML = """
    <?xml version="1.0"?>
    <opencv_storage>
    <calibration_time>"Wed 25 Nov 2026 14:00:00 UTC"</calibration_time>
    <image_width>1280</image_width>
    <image_height>720</image_height>
    <!-- flags:  +zero_tangent_dist -->
    <flags>8</flags>
    <camera_matrix type_id="opencv-matrix">
      <rows>3</rows>
      <cols>3</cols>
      <dt>d</dt>
      <data>
        9.1234500000000003e+02 0. 6.4012500000000000e+02 0.
        9.1345600000000002e+02 3.5987500000000000e+02 0. 0. 1.</data></camera_matrix>
    <distortion_coefficients type_id="opencv-matrix">
      <rows>5</rows>
      <cols>1</cols>
      <dt>d</dt>
      <data>
        1.0000000000000001e-01 -2.0000000000000001e-01 0. 0.
        5.0000000000000003e-02</data></distortion_coefficients>
    </opencv_storage>

    """

    /// camera_calibration_parsers' writeCalibrationYml (TUM fr1's intrinsics).
    static let rosYAML = """
    image_width: 640
    image_height: 480
    camera_name: narrow_stereo
    camera_matrix:
      rows: 3
      cols: 3
      data: [517.306408, 0, 318.643040, 0, 516.469215, 255.313989, 0, 0, 1]
    distortion_model: plumb_bob
    distortion_coefficients:
      rows: 1
      cols: 5
      data: [0.262383, -0.953104, -0.005358, 0.002628, 1.163314]
    rectification_matrix:
      rows: 3
      cols: 3
      data: [1, 0, 0, 0, 1, 0, 0, 0, 1]
    projection_matrix:
      rows: 3
      cols: 4
      data: [517.306408, 0, 318.643040, 0, 0, 516.469215, 255.313989, 0, 0, 0, 1, 0]

    """

    /// stereo_calib's extrinsics.yml: R a 90° turn about x (row-major order shows), T in millimeters.
    static let stereoYAML = """
    %YAML:1.0
    ---
    R: !!opencv-matrix
       rows: 3
       cols: 3
       dt: d
       data: [ 1., 0., 0., 0., 0., -1., 0., 1., 0. ]
    T: !!opencv-matrix
       rows: 3
       cols: 1
       dt: d
       data: [ 1.4310000000000000e+01, 6.0000000000000000e-01,
           6.1000000000000000e-01 ]

    """

    func assertCamera(_ c: CameraModel?, _ fx: Float, _ fy: Float, _ cx: Float, _ cy: Float, _ w: Int, _ h: Int,
                      file: StaticString = #filePath, line: UInt = #line) {
        guard let k = c?.intrinsics else { return XCTFail("no camera", file: file, line: line) }
        XCTAssertEqual(k.fx, fx, accuracy: 1e-3, file: file, line: line)
        XCTAssertEqual(k.fy, fy, accuracy: 1e-3, file: file, line: line)
        XCTAssertEqual(k.cx, cx, accuracy: 1e-3, file: file, line: line)
        XCTAssertEqual(k.cy, cy, accuracy: 1e-3, file: file, line: line)
        XCTAssertEqual(k.width, w, file: file, line: line)
        XCTAssertEqual(k.height, h, file: file, line: line)
    }

    func testEachKindIsRecognizedByContentWhateverItsName() throws {
        let cv = try CalibrationFile.read(try write("camera.txt", Self.openCVYAML))
        XCTAssertEqual(cv.kind, .openCVYAML)
        XCTAssertEqual(cv.label, "OpenCV YAML camera.txt")
        assertCamera(cv.camera, 605.12398681640625, 607.980712890625, 312.5, 243.25, 640, 480)
        XCTAssertEqual(cv.camera?.model, .brownConrady)
        XCTAssertEqual(cv.camera?.coeffs ?? [], [0.11398429327416236, -0.73251089408226562, 0, 0, 1.1520357686990713])

        let xml = try CalibrationFile.read(try write("camera.yml", Self.openCVXML))
        XCTAssertEqual(xml.kind, .openCVXML)
        assertCamera(xml.camera, 912.345, 913.456, 640.125, 359.875, 1280, 720)
        XCTAssertEqual(xml.camera?.coeffs ?? [], [0.1, -0.2, 0, 0, 0.05])

        let ros = try CalibrationFile.read(try write("left.xml", Self.rosYAML))
        XCTAssertEqual(ros.kind, .rosCameraInfo)
        XCTAssertEqual(ros.label, "ROS camera_info left.xml")
        assertCamera(ros.camera, 517.306408, 516.469215, 318.643040, 255.313989, 640, 480)
        XCTAssertEqual(ros.camera?.model, .brownConrady)

        let json = try CalibrationFile.read(try write("cal.yaml", """
            {"depth_scale": 1000, "intrinsics": {"depth": {"width": 4, "height": 3, "fx": 5, "fy": 6, "cx": 1.5, "cy": 1}}}
            """))
        XCTAssertEqual(json.kind, .depthlensJSON)
        XCTAssertEqual(json.rgbd?.origin, "depthlens JSON cal.yaml")
        assertCamera(json.rgbd?.depth, 5, 6, 1.5, 1, 4, 3)

        let stereo = try CalibrationFile.read(try write("extrinsics.yml", Self.stereoYAML))
        XCTAssertNil(stereo.camera)
        XCTAssertEqual(stereo.stereo?.rotation ?? [], [1, 0, 0, 0, 0, -1, 0, 1, 0])
        XCTAssertEqual(stereo.stereo?.translation ?? .zero, SIMD3(14.31, 0.6, 0.61))
    }

    /// The same camera_info as Python's yaml.dump writes it (block sequences at the key's
    /// indentation, keys sorted), through Debian's python3-yaml: an independent writer.
    func testROSFileWrittenByPyYAMLBlockStyle() throws {
        let out = dir + "/pyyaml.yaml"
        let script = """
        import yaml, sys
        d = {'image_width': 640, 'image_height': 480, 'camera_name': 'cam "left"',
             'camera_matrix': {'rows': 3, 'cols': 3, 'data': [517.306408, 0.0, 318.64304, 0.0, 516.469215, 255.313989, 0.0, 0.0, 1.0]},
             'distortion_model': 'plumb_bob',
             'distortion_coefficients': {'rows': 1, 'cols': 5, 'data': [0.262383, -0.953104, -0.005358, 0.002628, 1.163314]},
             'rectification_matrix': {'rows': 3, 'cols': 3, 'data': [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]},
             'projection_matrix': {'rows': 3, 'cols': 4, 'data': [517.306408, 0.0, 318.64304, 0.0, 0.0, 516.469215, 255.313989, 0.0, 0.0, 0.0, 1.0, 0.0]}}
        open(sys.argv[1], 'w').write(yaml.dump(d, default_flow_style=False))
        """
        let r = try TestProcess.result("/usr/bin/python3", ["-c", script, out], timeout: 60)
        XCTAssertEqual(r.status, 0, "python3-yaml (scripts/lib.sh installs it) must write the file: \(r.stderr)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        XCTAssertTrue(text.contains("data:\n  - 517.306408"), text)  // the block style this test is about
        let f = try CalibrationFile.read(out)
        XCTAssertEqual(f.kind, .rosCameraInfo)
        assertCamera(f.camera, 517.306408, 516.469215, 318.64304, 255.313989, 640, 480)
        let tree = try YAMLSubset.parse(text)
        XCTAssertEqual(tree["camera_name"], .scalar("cam \"left\""))
    }

    /// OpenCV writing with cv2.FileStorage (opencv-python-headless in the reference venv): the
    /// file it writes reads back to the matrix it was given.
    func testFileWrittenByCv2() throws {
        let out = dir + "/cv2.yml", xml = dir + "/cv2.xml"
        let script = """
        import cv2, numpy as np, sys
        for path in sys.argv[1:]:
            fs = cv2.FileStorage(path, cv2.FILE_STORAGE_WRITE)
            fs.write('image_width', 848); fs.write('image_height', 480)
            fs.write('camera_matrix', np.array([[421.5, 0, 424.25], [0, 421.75, 239.5], [0, 0, 1]]))
            fs.write('distortion_coefficients', np.array([[0.01, -0.02, 0.0, 0.0, 0.003]]))
            fs.release()
        """
        let py = try PythonReference.python(importing: ["cv2", "numpy"])
        let r = try TestProcess.run([py, "-c", script, out, xml], timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { return }
        for (path, kind) in [(out, CalibrationFile.Kind.openCVYAML), (xml, .openCVXML)] {
            let f = try CalibrationFile.read(path)
            XCTAssertEqual(f.kind, kind)
            assertCamera(f.camera, 421.5, 421.75, 424.25, 239.5, 848, 480)
            XCTAssertEqual(f.camera?.coeffs ?? [], [0.01, -0.02, 0, 0, 0.003])
        }
    }

    func testYAMLSubsetStructures() throws {
        let t = try YAMLSubset.parse("""
            # a comment line
            a: 1   # trailing comment
            b: "x # not a comment"
            c: 'it''s'
            d:
              - 1
              - [2, 3]
              - e: 4
                f: five
            g: {h: [6, 7], i: "8"}
            j: [ 9,
                 10 ]
            k:
            - 11
            """)
        XCTAssertEqual(t["a"], .scalar("1"))
        XCTAssertEqual(t["b"], .scalar("x # not a comment"))
        XCTAssertEqual(t["c"], .scalar("it's"))
        XCTAssertEqual(t["d"], .sequence([.scalar("1"), .sequence([.scalar("2"), .scalar("3")]),
                                          .mapping([("e", .scalar("4")), ("f", .scalar("five"))])]))
        XCTAssertEqual(t["g"], .mapping([("h", .sequence([.scalar("6"), .scalar("7")])), ("i", .scalar("8"))]))
        XCTAssertEqual(t["j"], .sequence([.scalar("9"), .scalar("10")]))
        XCTAssertEqual(t["k"], .sequence([.scalar("11")]))
    }

    func testBadFilesAreOneLineNamingTheFile() throws {
        let cases: [(String, String, String)] = [
            ("nomatrix.yml", "%YAML:1.0\n---\nimage_width: 640\nimage_height: 480\n", "no camera_matrix"),
            ("rows.yml", Self.openCVYAML.replacingOccurrences(of: "rows: 3\n   cols: 3\n   dt: d\n   data: [ 6.05", with: "rows: 3\n   cols: 2\n   dt: d\n   data: [ 6.05"),
             "'camera_matrix' is 3×2 = 6 numbers but its data has 9"),
            ("four.yml", Self.rosYAML.replacingOccurrences(of: "cols: 3\n  data: [517", with: "cols: 4\n  data: [517"),
             "'camera_matrix' is 3×4 = 12 numbers but its data has 9"),
            ("nosize.yml", Self.openCVYAML.replacingOccurrences(of: "image_width: 640\n", with: ""), "no image_width and image_height"),
            ("text.yml", "just some words\n", "not a calibration file"),
            ("anchor.yml", "a: &x 1\nb: *x\n", "line 1: anchors and aliases"),
            ("block.yml", "a: |\n  text\n", "line 1: block scalars"),
            ("open.yml", "camera_matrix: [1, 2\n", "line 1: '[' or '{' is never closed"),
            ("tab.yml", "a:\n\tb: 1\n", "line 2: tab in indentation"),
            ("deep.yml", "a: " + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "\n", "line 1: nested deeper than 64 levels"),
            ("deep.xml", "<opencv_storage>" + String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100) + "</opencv_storage>",
             "elements nested deeper than 64 levels"),
            ("bad.xml", "<?xml version=\"1.0\"?>\n<opencv_storage>\n<image_width>640</image_height>\n", "<image_width> closed by </image_height>"),
            ("binary.yml", "\u{0}\u{1}", "not a calibration"),
            ("model.yml", Self.rosYAML.replacingOccurrences(of: "plumb_bob", with: "fisheye9"), "distortion_model 'fisheye9'"),
        ]
        for (name, text, problem) in cases {
            let path = try write(name, text)
            XCTAssertThrowsError(try CalibrationFile.read(path), name) { error in
                let line = "\(error)"
                XCTAssertTrue(line.hasPrefix(path + ": "), line)
                XCTAssertTrue(line.contains(problem), "\(name): \(line)")
                XCTAssertFalse(line.contains("\n"), line)
            }
        }
    }

    // MARK: CalibrationOverride: which camera gets which file, scaled to the stream

    func frame(color: (Int, Int), depth: (Int, Int)?) -> (PixelBuffer, DepthData?) {
        (PixelBuffer(width: color.0, height: color.1, format: .rgba8),
         depth.map { DepthData(map: PixelBuffer(width: $0.0, height: $0.1, format: .depthFloat32)) })
    }

    func testOneCameraFileIsBothCamerasScaledByHand() throws {
        let ros = try write("left.yaml", Self.rosYAML)
        let o = try CalibrationOverride(calibrationFile: ros, intrinsics: nil)
        let (c, d) = frame(color: (640, 480), depth: (320, 240))
        let cal = try o.resolve(recorded: nil, depthUnits: nil, color: c, depth: d)
        XCTAssertEqual(cal.origin, "ROS camera_info left.yaml")
        XCTAssertEqual(cal.depthToColor, .identity)
        assertCamera(cal.color, 517.306408, 516.469215, 318.643040, 255.313989, 640, 480)
        // Half size: fx' = 517.306408/2, cx' = (318.64304 + 0.5)·0.5 − 0.5 = 159.07152,
        // fy' = 516.469215/2 = 258.2346075, cy' = (255.313989 + 0.5)·0.5 − 0.5 = 127.4069945.
        assertCamera(cal.depth, 258.653204, 258.2346075, 159.07152, 127.4069945, 320, 240)
        XCTAssertFalse(cal.needsAlignment, "one camera at two sizes")
    }

    func testColorDepthAndExtrinsicsFilesEachTheirOwn() throws {
        let color = try write("color.xml", Self.openCVXML)
        let depth = try write("depth.yml", Self.openCVYAML)
        let stereo = try write("stereo.yml", Self.stereoYAML)
        let o = try CalibrationOverride(calibrationFile: "color=\(color),depth=\(depth),extrinsics=\(stereo)", intrinsics: nil,
                                        extrinsicsUnits: "mm")
        let (c, d) = frame(color: (640, 360), depth: (1280, 960))
        let cal = try o.resolve(recorded: nil, depthUnits: 5000, color: c, depth: d)
        XCTAssertEqual(cal.origin, "color OpenCV XML color.xml, depth OpenCV YAML depth.yml, extrinsics OpenCV YAML stereo.yml")
        XCTAssertEqual(cal.depthScale, 5000)
        // 1280x720 → 640x360: fx 912.345/2 = 456.1725, fy 913.456/2 = 456.728,
        // cx (640.125 + 0.5)·0.5 − 0.5 = 319.8125, cy (359.875 + 0.5)·0.5 − 0.5 = 179.6875.
        assertCamera(cal.color, 456.1725, 456.728, 319.8125, 179.6875, 640, 360)
        // 640x480 → 1280x960: fx 1210.2479736, fy 1215.9614258, cx (312.5 + 0.5)·2 − 0.5 = 625.5, cy (243.25 + 0.5)·2 − 0.5 = 487
        assertCamera(cal.depth, 1210.2479736328125, 1215.96142578125, 625.5, 487, 1280, 960)
        XCTAssertEqual(cal.depthToColor.rotation, [1, 0, 0, 0, 0, -1, 0, 1, 0])
        XCTAssertEqual(cal.depthToColor.translation.x, 0.01431, accuracy: 1e-7)
        XCTAssertEqual(cal.depthToColor.translation.y, 0.0006, accuracy: 1e-7)
        XCTAssertEqual(cal.depthToColor.translation.z, 0.00061, accuracy: 1e-7)
        XCTAssertTrue(cal.needsAlignment)

        // Meters: T as written.
        let m = try CalibrationOverride(calibrationFile: "extrinsics=\(stereo)", intrinsics: nil, extrinsicsUnits: "m")
        let calM = try m.resolve(recorded: nil, depthUnits: nil, color: c, depth: d)
        XCTAssertEqual(calM.depthToColor.translation, SIMD3(14.31, 0.6, 0.61))
        XCTAssertEqual(calM.color.intrinsics, .default(width: 640, height: 360), "a camera not given stays as assumed")
    }

    func testOptionErrors() throws {
        let stereo = try write("stereo.yml", Self.stereoYAML)
        let ros = try write("ros.yaml", Self.rosYAML)
        let cases: [(String, String?, String)] = [
            ("extrinsics=\(stereo)", nil, "\(stereo): OpenCV's T is in the units the calibration board was measured in: give --extrinsics-units mm or m"),
            ("extrinsics=\(stereo)", "cm", "--extrinsics-units must be mm or m, got 'cm'"),
            (ros, "mm", "--extrinsics-units goes with --calibration …,extrinsics=FILE (an OpenCV stereo file's T)"),
            ("extrinsics=\(ros)", nil, "\(ros): has no extrinsics"),
            ("color=\(stereo)", nil, "\(stereo): has no camera_matrix (a stereo R and T file goes in extrinsics=)"),
            (stereo, nil, "\(stereo): holds stereo R and T only"),
            ("color=\(ros),color=\(ros)", nil, "--calibration names color= twice"),
            ("color=\(ros),lens=x", nil, "--calibration takes FILE or color=FILE,depth=FILE[,extrinsics=FILE]"),
            ("depth=", nil, "--calibration depth= needs a file"),
        ]
        for (spec, units, message) in cases {
            XCTAssertThrowsError(try CalibrationOverride(calibrationFile: spec, intrinsics: nil, extrinsicsUnits: units), spec) { error in
                XCTAssertTrue("\(error)".hasPrefix(message), "\(spec): \(error)")
            }
        }
    }

    func testAnotherAspectRatioIsAnErrorNamingTheFile() throws {
        let ros = try write("ros.yaml", Self.rosYAML)
        let o = try CalibrationOverride(calibrationFile: "depth=\(ros)", intrinsics: nil)
        let (c, d) = frame(color: (1280, 720), depth: (848, 480))
        XCTAssertThrowsError(try o.resolve(recorded: nil, depthUnits: nil, color: c, depth: d)) { error in
            XCTAssertEqual("\(error)", "\(ros): intrinsics for 640x480 do not fit the 848x480 depth stream (another aspect ratio; only a scaled size can use them)")
        }
    }
}
