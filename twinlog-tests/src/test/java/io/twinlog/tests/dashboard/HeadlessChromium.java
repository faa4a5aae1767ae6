package io.twinlog.tests.dashboard;

import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.logging.Level;
import java.util.stream.Stream;

/**
 * The system's headless Chromium driven by its chromedriver (Debian's {@code chromium} and {@code chromium-driver},
 * which {@code .ci/run} installs): a fresh profile per test, the browser console kept, screenshots on request.
 * Missing browser: the test fails with how to install it, it never skips.
 */
final class HeadlessChromium implements AutoCloseable {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private final ChromeDriver driver;
    private final Path profile;
    private final Path screenshots;
    private final List<LogEntry> console = new ArrayList<>();

    private HeadlessChromium(ChromeDriver driver, Path profile, Path screenshots) {
        this.driver = driver;
        this.profile = profile;
        this.screenshots = screenshots;
    }

    static HeadlessChromium start(Path screenshots) throws IOException {
        for (Path p : List.of(CHROMIUM, CHROMEDRIVER)) {
            if (!Files.isExecutable(p)) {
                throw new AssertionError(p + " is missing: the dashboard's browser test needs Debian's chromium and "
                        + "chromium-driver (apt-get install -y chromium chromium-driver; .ci/run installs them)");
            }
        }
        Files.createDirectories(screenshots);
        Path profile = Files.createTempDirectory("twinlog-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--user-data-dir=" + profile, "--window-size=1400,2200");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        try {
            return new HeadlessChromium(new ChromeDriver(service, options), profile, screenshots);
        } catch (RuntimeException e) {
            deleteTree(profile);
            throw e;
        }
    }

    ChromeDriver driver() {
        return driver;
    }

    /** Writes the page as it looks now to {@code <screenshots>/<name>.png}. */
    Path screenshot(String name) throws IOException {
        File shot = driver.getScreenshotAs(OutputType.FILE);
        Path target = screenshots.resolve(name + ".png");
        Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
        return target;
    }

    /** Every console entry of level SEVERE (errors, uncaught exceptions, failed loads) since the browser started. */
    List<String> consoleErrors() {
        console.addAll(driver.manage().logs().get(LogType.BROWSER).getAll());
        return console.stream().filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::toString).toList();
    }

    @Override
    public void close() {
        try {
            driver.quit();
        } finally {
            deleteTree(profile);
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            throw new AssertionError("Could not delete the browser profile " + dir, e);
        }
    }
}
